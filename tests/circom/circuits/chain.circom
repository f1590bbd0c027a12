pragma circom 2.0.0;

// s[i+1] = s[i]^2 + k: one multiplication constraint per step, so the
// constraint count (and the Groth16 domain) is set by N alone.
template Chain(N) {
    signal input x;
    signal input k;
    signal output out;
    signal s[N + 1];
    s[0] <== x;
    for (var i = 0; i < N; i++) {
        s[i + 1] <== s[i] * s[i] + k;
    }
    out <== s[N];
}
