"""The curves cuzk knows: one :class:`~cuzk.curves.spec.CurveSpec` entry each.

Adding a curve is one entry here plus ``python scripts/generate.py`` (docs/curves.md). An entry
gives only defining numbers (seed, field generators, non-residues, b, generator points, the
subgroup-check endomorphism where the cofactor is not 1); moduli, cofactors, the twist's b and
the ψ constants are derived, and the spec checks whatever is given twice.

    >>> CURVES["bn254"].fr.modulus == BN254.numbers.r
    True
"""

from __future__ import annotations

from cuzk.curve.params import CurveParams
from cuzk.curves import families
from cuzk.curves.spec import CurveSpec
from cuzk.field.params import FieldParams

__all__ = ["BLS12_381", "BN254", "BLS12_377", "CURVES"]


def _bls12_381() -> CurveSpec:
    # BLS12-381 (Bowe, "BLS12-381: New zk-SNARK Elliptic Curve Construction"; Zcash, Filecoin,
    # Ethereum 2): the default curve of every call that names none.
    x = -0xD201000000010000
    n = families.numbers("bls12", x)
    p, r = n.p, n.r
    beta = p - 1  # u² = −1 (p = 3 mod 4, so −1 is not a square and sqrt is one exponentiation)
    xi = (1, 1)  # ξ = 1 + u
    twist = "M"
    fr = FieldParams(name="fr", modulus=r, generator=7)  # 7: the bls12_381 / bellperson crates' (snarkjs uses 5)
    fq = FieldParams(name="fq", modulus=p, generator=2)
    g1 = CurveParams(
        name="g1", degree=1, b=(4,),
        generator=((0x17F1D3A73197D7942695638C4FA9AC0FC3688C4F9774B905A14E3A3F171BAC586C55E83FF97A1AEFFB3AF00ADB22C6BB,),
                   (0x08B3F481E3AAA0F1A09E30ED741D8AE4FCF5E095D5D00AF600DB18CB2C04B3EDD03CC744A2888AE40CAA232946C5E7E1,)),
        order=r, cofactor=n.g1_cofactor,
        # φ(x, y) = (βx, y) with β = 2^((p−1)/3), for which φ(P) = −x²·P on G1 (Bowe; Scott); the
        # other cube root, β², pairs with λ = x² − 1 instead
        endo_x=(pow(2, (p - 1) // 3, p),), endo_y=(1,), endo_scalar=-x, endo_scalar_power=2, endo_negate=True,
    )
    psi_x, psi_y = families.psi_constants(xi, twist, p, beta)
    g2 = CurveParams(
        name="g2", degree=2, b=families.twist_b(4, xi, twist, p, beta),  # y² = x³ + 4(1 + u), the M-type twist
        generator=(
            (0x024AA2B2F08F0A91260805272DC51051C6E47AD4FA403B02B4510B647AE3D1770BAC0326A805BBEFD48056C8C121BDB8,
             0x13E02B6052719F607DACD3A088274F65596BD0D09920B61AB5DA61BBDC7F5049334CF11213945D57E5AC7D055D042B7E),
            (0x0CE5D527727D6E118CC9CDC6DA2E351AADFD9BAA8CBDD3A76D429A695160D12C923AC9CC3BACA289E193548608B82801,
             0x0606C4A02EA734CC32ACD2B02BC28B99CB3E287E85A763AF267492AB572E99AB3F370D275CEC1DA1AAA9075FF05F79BE),
        ),
        order=r, cofactor=n.g2_cofactor,
        # ψ(Q) = x·Q = −|x|·Q on G2 (Scott 2021): ψ = untwist ∘ Frobenius ∘ twist
        endo_x=psi_x, endo_y=psi_y, endo_scalar=-x, endo_scalar_power=1, endo_negate=True,
    )
    return CurveSpec(
        name="bls12_381", title="BLS12-381", family="bls12", x=x, fr=fr, fq=fq, fq2_nonresidue=beta,
        fq6_nonresidue=xi, twist=twist, g1=g1, g2=g2, aliases=("bls12381",), point_encoding="zcash",
        snarkjs_name="bls12381",
    )


BLS12_381 = _bls12_381()


def _bn254() -> CurveSpec:
    # BN254 (alt_bn128 of EIP-196/197, circom/snarkjs "bn128"): Kasamatsu et al.'s seed.
    x = 4965661367192848881
    n = families.numbers("bn", x)
    p = n.p
    beta = p - 1  # u² = −1 (p = 3 mod 4, so −1 is not a square)
    xi = (9, 1)  # ξ = 9 + u
    twist = "D"
    fr = FieldParams(name="fr", modulus=n.r, generator=5)  # 5: the snarkjs / arkworks Fr generator
    fq = FieldParams(name="fq", modulus=p, generator=3)
    g1 = CurveParams(name="g1", degree=1, b=(3,), generator=((1,), (2,)), order=n.r, cofactor=n.g1_cofactor)
    psi_x, psi_y = families.psi_constants(xi, twist, p, beta)
    g2 = CurveParams(
        name="g2",
        degree=2,
        b=families.twist_b(3, xi, twist, p, beta),
        # EIP-197's generator of G2
        generator=(
            (
                10857046999023057135944570762232829481370756359578518086990519993285655852781,
                11559732032986387107991004021392285783925812861821192530917403151452391805634,
            ),
            (
                8495653923123431417604973247489272438418190587263600148770280649306958101930,
                4082367875863433681332203403145435568316851327593401208105741076214120093531,
            ),
        ),
        order=n.r,
        cofactor=n.g2_cofactor,
        # ψ(Q) = [6x²]Q decides membership in G2 for BN curves (El Housni–Guillevic–Piellard,
        # eprint 2022/352): a 127-bit multiple instead of a 254-bit r·Q
        endo_x=psi_x,
        endo_y=psi_y,
        endo_scalar=6 * x * x,
        endo_scalar_power=1,
        endo_negate=False,
    )
    return CurveSpec(
        name="bn254", title="BN254", family="bn", x=x, fr=fr, fq=fq, fq2_nonresidue=beta, fq6_nonresidue=xi,
        twist=twist, g1=g1, g2=g2, aliases=("bn128", "alt_bn128"), snarkjs_name="bn128",
    )


BN254 = _bn254()

def _bls12_377() -> CurveSpec:
    # BLS12-377 (Bowe et al., "Zexe", eprint 2018/962; the ZPrize curve): a BLS12 seed with
    # 2^46 | x - 1, so Fr has 2-adicity 47 (big NTT domains) and Fq has 2-adicity 46.
    x = 0x8508C00000000001
    n = families.numbers("bls12", x)
    p, r = n.p, n.r
    beta = p - 5  # u² = −5
    xi = (0, 1)  # ξ = u
    twist = "D"
    fr = FieldParams(name="fr", modulus=r, generator=22)  # arkworks' Fr generator
    fq = FieldParams(name="fq", modulus=p, generator=15)  # arkworks' Fq generator
    # φ(x, y) = (ω·x, y) with ω = 15^(2(p−1)/3), the cube root of unity for which φ(P) = −x²·P on G1
    # (tests/test_bls12_377.py checks it on the generator)
    omega = pow(fq.generator, 2 * ((p - 1) // 3), p)
    g1 = CurveParams(
        name="g1", degree=1, b=(1,),
        # Zexe's / arkworks' G1 generator
        generator=((0x008848DEFE740A67C8FC6225BF87FF5485951E2CAA9D41BB188282C8BD37CB5CD5481512FFCD394EEAB9B16EB21BE9EF,),
                   (0x01914A69C5102EFF1F674F5D30AFEEC4BD7FB348CA3E52D96D182AD44FB82305C2FE3D3634A9591AFD82DE55559C8EA6,)),
        order=r, cofactor=n.g1_cofactor,
        endo_x=(omega,), endo_y=(1,), endo_scalar=x, endo_scalar_power=2, endo_negate=True,
    )
    psi_x, psi_y = families.psi_constants(xi, twist, p, beta)
    g2 = CurveParams(
        name="g2", degree=2, b=families.twist_b(1, xi, twist, p, beta),
        # h2·(2 + u, y) with y the root tests/test_bls12_377.py re-derives: the first point of
        # the twist with x = c + u, c = 0, 1, 2, ..., times the G2 cofactor (not arkworks' generator)
        generator=(
            (67004216521362769139960304638241662463384504912045095543649118964167831559549275276665917802324363056069254155209,
             188039100033830534835560926333495938812099884491688240598849896699685545777288948680356069069856197422355451241144),
            (45703300813429421378170869002449644530550548174480087769069680146323877439017177818322750277925999549225687852779,
             191038667105636875553409048680615171401803323234506409576860850365172536228013460487750431340801607517594700179909),
        ),
        order=r, cofactor=n.g2_cofactor,
        # ψ(Q) = [x]Q on G2 (p ≡ x mod r for BLS12; x > 0 here, so no negation)
        endo_x=psi_x, endo_y=psi_y, endo_scalar=x, endo_scalar_power=1, endo_negate=False,
    )
    return CurveSpec(
        name="bls12_377", title="BLS12-377", family="bls12", x=x, fr=fr, fq=fq, fq2_nonresidue=beta,
        fq6_nonresidue=xi, twist=twist, g1=g1, g2=g2, aliases=("bls12377",),
    )


BLS12_377 = _bls12_377()

CURVES = {c.name: c for c in (BLS12_381, BN254, BLS12_377)}
