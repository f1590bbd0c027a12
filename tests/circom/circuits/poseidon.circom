pragma circom 2.0.0;

include "circomlib/circuits/poseidon.circom";

// A circomlib Poseidon hash (its constants are BN254's, reduced into BLS12-381 Fr by
// --prime bls12381: the circuit is still a realistic mix of linear and quadratic rows).
template PoseidonPreimage() {
    signal input a;
    signal input b;
    signal output h;
    component p = Poseidon(2);
    p.inputs[0] <== a;
    p.inputs[1] <== b;
    h <== p.out;
}
