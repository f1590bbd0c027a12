// curio-client: cuzk's test oracle for Curio's side of the cuzk.v1 API (README.md).
//
//	curio-client -addr ADDR [-max-pending N] [-prove-timeout D] prove REQUEST.json
//	curio-client -addr ADDR [-prove-timeout D] prove-porep C1.json MINER SECTOR REGISTERED_PROOF SECTOR_SIZE
//	curio-client -addr ADDR [-prove-timeout D] prove-snap VANILLA.json COMM_R_OLD COMM_R_NEW COMM_D_NEW
//	    MINER SECTOR REGISTERED_PROOF SECTOR_SIZE
//	curio-client -addr ADDR [-max-pending N] status
//	curio-client -addr ADDR time-circuit NAME INPUTS_JSON
//	curio-client -addr ADDR health [SERVICE]
//	curio-client -addr ADDR reflect
//
// prove reads a SubmitProofRequest in protobuf's JSON mapping and calls Prove. prove-porep and
// prove-snap build the request from the files Curio's storage holds, as Curio does (sealing.go):
// a SealCommitPhase1Output JSON file, and a snap vanilla proof (a JSON array of base64 byte
// strings) with the three commitments in hex. status calls GetStatus. Each prints one JSON object on stdout: {"result": AwaitProofResponse} or
// {"status": GetStatusResponse, "capacity": N} (messages in protobuf's JSON mapping), or
// {"error": text, "code": gRPC status code name} when the call fails.
//
// time-circuit is for benchmarks/serve_bench.py, not Curio's: for each line read on stdin it
// proves the [[circuits]] entry NAME from INPUTS_JSON through cuzk's CircuitProver.ProveCircuit
// and prints the call's duration in nanoseconds on a line of its own, until stdin closes; a
// failed call prints the error JSON and ends the run.
//
// health is gRPC's standard health check (grpc.health.v1.Health/Check through grpc-go's own
// stub, as grpc_health_probe and Kubernetes' probe ask it), not Curio's: it prints
// {"health": "SERVING"} or the error JSON. reflect asks server reflection (grpc-go's v1alpha
// stub, what grpcurl falls back to) for the services and, for each, the .proto file that defines
// it: {"services": [...], "files": {service: file name}}.
// Exit status: 0 answered, 1 the call failed (the JSON says how), 2 bad usage or input.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"cuzk.dev/oracles/curio-client/cuzk"
)

func usage(msg string) int {
	fmt.Fprintln(os.Stderr, "curio-client:", msg)
	fmt.Fprintln(os.Stderr, "usage: curio-client -addr ADDR [-max-pending N] [-prove-timeout D] (prove REQUEST.json | prove-porep ... | prove-snap ... | status | time-circuit NAME INPUTS_JSON | health [SERVICE] | reflect)")
	return 2
}

func emit(out map[string]any) {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "curio-client: writing the answer:", err)
		os.Exit(2)
	}
}

// message is m in protobuf's JSON mapping, as a value encoding/json writes verbatim.
func message(m proto.Message) json.RawMessage {
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		panic(err) // a message the stubs just decoded always marshals
	}
	return b
}

func failed(err error) int {
	emit(map[string]any{"error": err.Error(), "code": status.Code(err).String()})
	return 1
}

func run() int {
	addr := flag.String("addr", "", "the daemon's address, as Curio's [Cuzk] Address takes it")
	maxPending := flag.Int("max-pending", 10, "Curio's [Cuzk] MaxPending")
	proveTimeout := flag.Duration("prove-timeout", 30*time.Minute, "Curio's [Cuzk] ProveTimeout")
	flag.Parse()
	if *addr == "" || flag.NArg() < 1 {
		return usage("-addr and a command are needed")
	}
	c, err := newClient(*addr, *maxPending, *proveTimeout)
	if err != nil {
		return usage(err.Error())
	}
	defer c.close()
	ctx := context.Background()
	switch cmd := flag.Arg(0); {
	case cmd == "prove" && flag.NArg() == 2:
		raw, err := os.ReadFile(flag.Arg(1))
		if err != nil {
			return usage(err.Error())
		}
		req := &cuzk.SubmitProofRequest{}
		if err := protojson.Unmarshal(raw, req); err != nil {
			return usage(fmt.Sprintf("%s is not a SubmitProofRequest in JSON: %v", flag.Arg(1), err))
		}
		result, err := c.prove(ctx, req)
		if err != nil {
			return failed(err)
		}
		emit(map[string]any{"result": message(result)})
	case cmd == "status" && flag.NArg() == 1:
		st, err := c.status(ctx)
		if err != nil {
			return failed(err)
		}
		emit(map[string]any{"status": message(st), "capacity": c.capacity(st)})
	case cmd == "health" && flag.NArg() <= 2:
		st, err := c.health(ctx, flag.Arg(1))
		if err != nil {
			return failed(err)
		}
		emit(map[string]any{"health": st})
	case cmd == "reflect" && flag.NArg() == 1:
		services, files, err := c.reflect(ctx)
		if err != nil {
			return failed(err)
		}
		emit(map[string]any{"services": services, "files": files})
	case cmd == "time-circuit" && flag.NArg() == 3:
		return timeCircuits(ctx, c, &cuzk.ProveCircuitRequest{Circuit: flag.Arg(1), InputsJson: flag.Arg(2)})
	default:
		if req, ok, err := sealingRequest(flag.Args()); ok {
			if err != nil {
				return usage(err.Error())
			}
			result, err := c.prove(ctx, req)
			if err != nil {
				return failed(err)
			}
			emit(map[string]any{"result": message(result)})
			return 0
		}
		return usage(fmt.Sprintf("unknown command %q", flag.Args()))
	}
	return 0
}

func main() { os.Exit(run()) }

// sealingRequest is the request of a prove-porep or prove-snap command line (ok false for any
// other command).
func sealingRequest(args []string) (req *cuzk.SubmitProofRequest, ok bool, err error) {
	switch {
	case args[0] == "prove-porep" && len(args) == 6:
		s, err := parseSectorRef(args[2:])
		if err != nil {
			return nil, true, err
		}
		c1, err := os.ReadFile(args[1])
		if err != nil {
			return nil, true, err
		}
		req, err = porepRequest(c1, s)
		return req, true, err
	case args[0] == "prove-snap" && len(args) == 9:
		s, err := parseSectorRef(args[5:])
		if err != nil {
			return nil, true, err
		}
		var comms [3][]byte
		for i, name := range []string{"COMM_R_OLD", "COMM_R_NEW", "COMM_D_NEW"} {
			if comms[i], err = commitment(name, args[2+i]); err != nil {
				return nil, true, err
			}
		}
		vanilla, err := os.ReadFile(args[1])
		if err != nil {
			return nil, true, err
		}
		req, err = snapRequest(vanilla, s, comms[0], comms[1], comms[2])
		return req, true, err
	}
	return nil, false, nil
}

func timeCircuits(ctx context.Context, c *client, req *cuzk.ProveCircuitRequest) int {
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		took, err := c.timeCircuit(ctx, req)
		if err != nil {
			return failed(err)
		}
		fmt.Println(took.Nanoseconds())
	}
	return 0
}
