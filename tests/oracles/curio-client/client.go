package main

// A client of the cuzk.v1.ProvingEngine API that connects and calls the way Curio's client does
// (docs/serve.md, "What is and is not checked against Curio and Filecoin"): the address forms
// Curio's configuration takes, insecure transport credentials, no metadata, 256 MiB messages both
// ways, Prove wrapping a SubmitProofRequest with a per-call timeout, a non-COMPLETED status
// turned into an error, GetStatus bounded to 5 s, and free capacity as MaxPending minus the
// pending and in-progress counts of every queue.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectpb "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"cuzk.dev/oracles/curio-client/cuzk"
)

const maxMessageBytes = 256 << 20 // Curio's call options (docs/serve.md: the daemon's default bound too)

type client struct {
	conn         *grpc.ClientConn
	svc          cuzk.ProvingEngineClient
	circuits     cuzk.CircuitProverClient // cuzk's extension service (circuits.proto); Curio never calls it
	proveTimeout time.Duration
	maxPending   int
}

// target turns Curio's [Cuzk] Address ("unix:///run/cuzk.sock", "127.0.0.1:9820") into a gRPC target.
func target(addr string) string {
	if !strings.Contains(addr, "://") && !strings.HasPrefix(addr, "unix:") {
		return "dns:///" + addr
	}
	return addr
}

func newClient(addr string, maxPending int, proveTimeout time.Duration) (*client, error) {
	conn, err := grpc.NewClient(target(addr),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageBytes), grpc.MaxCallSendMsgSize(maxMessageBytes)))
	if err != nil {
		return nil, fmt.Errorf("connecting to cuzk daemon at %s: %w", addr, err)
	}
	return &client{conn: conn, svc: cuzk.NewProvingEngineClient(conn), circuits: cuzk.NewCircuitProverClient(conn),
		proveTimeout: proveTimeout, maxPending: maxPending}, nil
}

func (c *client) close() error { return c.conn.Close() }

// prove returns the answer of a COMPLETED proof; any other status is an error, as Curio treats it.
func (c *client) prove(ctx context.Context, req *cuzk.SubmitProofRequest) (*cuzk.AwaitProofResponse, error) {
	if c.proveTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.proveTimeout)
		defer cancel()
	}
	resp, err := c.svc.Prove(ctx, &cuzk.ProveRequest{Submit: req})
	if err != nil {
		return nil, fmt.Errorf("cuzk Prove RPC: %w", err)
	}
	result := resp.Result
	if result == nil {
		return nil, fmt.Errorf("cuzk Prove returned nil result")
	}
	switch result.Status {
	case cuzk.AwaitProofResponse_COMPLETED:
		return result, nil
	case cuzk.AwaitProofResponse_FAILED:
		return nil, fmt.Errorf("cuzk proof failed: %s", result.ErrorMessage)
	case cuzk.AwaitProofResponse_CANCELLED:
		return nil, fmt.Errorf("cuzk proof cancelled")
	case cuzk.AwaitProofResponse_TIMEOUT:
		return nil, fmt.Errorf("cuzk proof timed out")
	default:
		return nil, fmt.Errorf("cuzk proof unknown status: %v", result.Status)
	}
}

func (c *client) status(ctx context.Context) (*cuzk.GetStatusResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return c.svc.GetStatus(ctx, &cuzk.GetStatusRequest{})
}

// capacity is how many more proofs Curio would hand this daemon now (0 = full).
func (c *client) capacity(st *cuzk.GetStatusResponse) int {
	var pending uint32
	for _, q := range st.Queues {
		pending += q.Pending + q.InProgress
	}
	return max(c.maxPending-int(pending), 0)
}

// timeCircuit proves a [[circuits]] entry once and returns how long the call took, as a Go
// client sees it: the daemon's latency without a Python client's share (benchmarks/serve_bench.py).
func (c *client) timeCircuit(ctx context.Context, req *cuzk.ProveCircuitRequest) (time.Duration, error) {
	t0 := time.Now()
	resp, err := c.circuits.ProveCircuit(ctx, req)
	took := time.Since(t0)
	if err != nil {
		return 0, fmt.Errorf("cuzk ProveCircuit RPC: %w", err)
	}
	if st := resp.GetResult().GetStatus(); st != cuzk.AwaitProofResponse_COMPLETED {
		return 0, fmt.Errorf("cuzk ProveCircuit: status %v: %s", st, resp.GetResult().GetErrorMessage())
	}
	return took, nil
}

// health asks grpc.health.v1.Health/Check for service ("" = the server as a whole), bounded to
// 5 s as a probe is, and returns the status name ("SERVING", "NOT_SERVING").
func (c *client) health(ctx context.Context, service string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(c.conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		return "", fmt.Errorf("health Check RPC: %w", err)
	}
	return resp.GetStatus().String(), nil
}

// reflect lists the services through server reflection, then asks for the file defining each,
// on one stream, bounded to 10 s; the services and each one's file name.
func (c *client) reflect(ctx context.Context) ([]string, map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	stream, err := reflectpb.NewServerReflectionClient(c.conn).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("reflection stream: %w", err)
	}
	ask := func(req *reflectpb.ServerReflectionRequest) (*reflectpb.ServerReflectionResponse, error) {
		if err := stream.Send(req); err != nil {
			return nil, fmt.Errorf("reflection send: %w", err)
		}
		resp, err := stream.Recv()
		if err != nil {
			return nil, fmt.Errorf("reflection RPC: %w", err)
		}
		if e := resp.GetErrorResponse(); e != nil {
			return nil, fmt.Errorf("reflection: code %d: %s", e.GetErrorCode(), e.GetErrorMessage())
		}
		return resp, nil
	}
	resp, err := ask(&reflectpb.ServerReflectionRequest{
		MessageRequest: &reflectpb.ServerReflectionRequest_ListServices{ListServices: "*"}})
	if err != nil {
		return nil, nil, err
	}
	var services []string
	files := map[string]string{}
	for _, s := range resp.GetListServicesResponse().GetService() {
		services = append(services, s.GetName())
		r, err := ask(&reflectpb.ServerReflectionRequest{
			MessageRequest: &reflectpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: s.GetName()}})
		if err != nil {
			return nil, nil, err
		}
		raw := r.GetFileDescriptorResponse().GetFileDescriptorProto()
		if len(raw) == 0 {
			return nil, nil, fmt.Errorf("reflection: no file for %s", s.GetName())
		}
		fd := &descriptorpb.FileDescriptorProto{}
		if err := proto.Unmarshal(raw[0], fd); err != nil {
			return nil, nil, fmt.Errorf("reflection: the file of %s: %w", s.GetName(), err)
		}
		files[s.GetName()] = fd.GetName()
	}
	if err := stream.CloseSend(); err != nil {
		return nil, nil, fmt.Errorf("reflection close: %w", err)
	}
	return services, files, nil
}
