"""SHA-256 compression with the x86 SHA extensions (SHA-NI), as a Numba intrinsic.

One ``sha256rnds2`` does two rounds and ``sha256msg1``/``sha256msg2`` extend the message
schedule four words at a time, so a block costs ~32 instructions of rounds instead of ~64 x 20
scalar ones. The state travels as two 4-lane vectors in the order the instructions want
(ABEF and CDGH, lanes listed from the highest); the intrinsic reorders the plain ``a..h`` state
of the scalar kernel on the way in and out, so it is a drop-in replacement for it
(:mod:`~cuzk.circuits.filecoin.porep.sha_kernels` picks it when ``HAVE_SHA_NI``).

``HAVE_SHA_NI`` is read from the feature string Numba compiles for, which is part of Numba's
cache key: code with these instructions is never loaded on a CPU without them.

    >>> isinstance(HAVE_SHA_NI, bool)
    True
"""

from __future__ import annotations

import llvmlite.binding as llvm
from llvmlite import ir
from numba import config, types
from numba.extending import intrinsic

__all__ = ["HAVE_SHA_NI", "sha_ni_compress"]


def _features() -> str:
    if config.CPU_FEATURES is not None:
        return config.CPU_FEATURES
    return llvm.get_host_cpu_features().flatten()


HAVE_SHA_NI = "+sha" in _features().split(",") and "+sse4.1" in _features().split(",")

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_V4 = ir.VectorType(_I32, 4)


def _shuffle(builder, a, b, lanes):
    return builder.shuffle_vector(a, b, ir.Constant(ir.VectorType(_I32, 4), lanes))


def _pshufd(builder, x, imm):
    """``_mm_shuffle_epi32(x, imm)``: lane i takes lane ``(imm >> 2i) & 3``."""
    return _shuffle(builder, x, x, [(imm >> (2 * i)) & 3 for i in range(4)])


@intrinsic
def sha_ni_compress(typingctx, state, w, k):
    """Compress the block ``w[0:16]`` into ``state`` (both int64 arrays of 32-bit words;
    ``k`` the 64 round constants as int64). Same contract as the scalar ``_compress``."""
    sig = types.void(state, w, k)

    def codegen(context, builder, signature, args):
        mod = builder.module
        rnds2 = mod.declare_intrinsic("llvm.x86.sha256rnds2", fnty=ir.FunctionType(_V4, [_V4, _V4, _V4]))
        msg1 = mod.declare_intrinsic("llvm.x86.sha256msg1", fnty=ir.FunctionType(_V4, [_V4, _V4]))
        msg2 = mod.declare_intrinsic("llvm.x86.sha256msg2", fnty=ir.FunctionType(_V4, [_V4, _V4]))
        ptrs = [context.make_array(t)(context, builder, v).data for t, v in zip(signature.args, args)]
        s_ptr, w_ptr, k_ptr = ptrs

        def vec4(ptr, at):
            v = ir.Constant(_V4, ir.Undefined)
            for i in range(4):
                x = builder.load(builder.gep(ptr, [ir.Constant(_I64, at + i)]))
                v = builder.insert_element(v, builder.trunc(x, _I32), ir.Constant(_I32, i))
            return v

        abcd = vec4(s_ptr, 0)  # lanes a, b, c, d (lane 0 first)
        efgh = vec4(s_ptr, 4)
        tmp = _pshufd(builder, abcd, 0xB1)  # b a d c
        efgh = _pshufd(builder, efgh, 0x1B)  # h g f e
        st0 = _shuffle(builder, efgh, tmp, [2, 3, 4, 5])  # f e b a: ABEF
        st1 = _shuffle(builder, efgh, tmp, [0, 1, 6, 7])  # h g d c: CDGH
        save0, save1 = st0, st1
        msgs = []
        for g in range(16):
            if g < 4:
                m = vec4(w_ptr, 4 * g)
            else:
                # W[t..t+3] = msg2(msg1(W[t-16..], W[t-12..]) + W[t-7..t-4], W[t-4..t-1])
                m = builder.call(msg1, [msgs[g - 4], msgs[g - 3]])
                m = builder.add(m, _shuffle(builder, msgs[g - 2], msgs[g - 1], [1, 2, 3, 4]))
                m = builder.call(msg2, [m, msgs[g - 1]])
            msgs.append(m)
            wk = builder.add(m, vec4(k_ptr, 4 * g))
            st1 = builder.call(rnds2, [st1, st0, wk])
            st0 = builder.call(rnds2, [st0, st1, _pshufd(builder, wk, 0x0E)])
        st0 = builder.add(st0, save0)
        st1 = builder.add(st1, save1)
        tmp = _pshufd(builder, st0, 0x1B)  # a b e f
        st1 = _pshufd(builder, st1, 0xB1)  # g h c d
        abcd = _shuffle(builder, tmp, st1, [0, 1, 6, 7])
        efgh = _shuffle(builder, tmp, st1, [2, 3, 4, 5])
        for at, v in ((0, abcd), (4, efgh)):
            for i in range(4):
                x = builder.zext(builder.extract_element(v, ir.Constant(_I32, i)), _I64)
                builder.store(x, builder.gep(s_ptr, [ir.Constant(_I64, at + i)]))
        return context.get_dummy_value()

    return sig, codegen
