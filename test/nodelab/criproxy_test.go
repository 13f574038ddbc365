package nodelab_test

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/pullpath/pullpath/test/nodelab"
)

// imageService is a CRI image service that answers PullImage with the
// metadata it was sent and fails on an image named "fail".
type imageService struct {
	runtimeapi.UnimplementedImageServiceServer
}

func (imageService) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	grpc.SetTrailer(ctx, metadata.Pairs("seen-x-row", firstOf(md.Get("x-row"))))
	if req.GetImage().GetImage() == "fail" {
		return nil, status.Error(codes.NotFound, "no such image: fail")
	}
	return &runtimeapi.PullImageResponse{ImageRef: "sha256:" + req.GetImage().GetImage()}, nil
}

func firstOf(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// TestCRIProxyPassesThrough: the CRI proxy of the node tier adds no
// behaviour. Against a real gRPC server (the CRI image service above and
// gRPC's own health service, whose Watch is a server stream): unary calls
// come back with the same answer, status and trailer, metadata reaches the
// server, a server stream delivers every update, an unknown method stays
// Unimplemented, and PullImage requests are recorded without their
// secrets.
func TestCRIProxyPassesThrough(t *testing.T) {
	dir := t.TempDir()
	up := filepath.Join(dir, "runtime.sock")
	ln, err := net.Listen("unix", up)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	runtimeapi.RegisterImageServiceServer(srv, imageService{})
	go srv.Serve(ln)
	defer srv.Stop()

	p := &nodelab.CRIProxy{Upstream: up}
	sock := filepath.Join(dir, "proxy.sock")
	if err := p.Serve(sock); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	images := runtimeapi.NewImageServiceClient(conn)
	var trailer metadata.MD
	resp, err := images.PullImage(metadata.AppendToOutgoingContext(ctx, "x-row", "r1"), &runtimeapi.PullImageRequest{
		Image: &runtimeapi.ImageSpec{Image: "lab/app:1"},
		Auth:  &runtimeapi.AuthConfig{Username: "u", Password: "pw-Secret1"},
	}, grpc.Trailer(&trailer))
	if err != nil || resp.GetImageRef() != "sha256:lab/app:1" {
		t.Fatalf("PullImage through the proxy = %v, %v", resp, err)
	}
	if got := firstOf(trailer.Get("seen-x-row")); got != "r1" {
		t.Errorf("the server saw metadata x-row %q through the proxy, want r1 (trailer %v)", got, trailer)
	}
	_, err = images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "fail"},
		Auth: &runtimeapi.AuthConfig{IdentityToken: "idt-Secret2", ServerAddress: "https://reg.example"}})
	if st, _ := status.FromError(err); st.Code() != codes.NotFound || st.Message() != "no such image: fail" {
		t.Errorf("a failing PullImage through the proxy = %v, want NotFound with the server's message", err)
	}
	_, err = images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "anon"}})
	if err != nil {
		t.Errorf("anonymous PullImage: %v", err)
	}
	if _, err := images.ListImages(ctx, &runtimeapi.ListImagesRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("an unimplemented call through the proxy = %v, want Unimplemented", err)
	}

	// A server stream: the first status, then each change.
	h := healthpb.NewHealthClient(conn)
	if r, err := h.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health Check through the proxy = %v, %v", r, err)
	}
	w, err := h.Watch(ctx, &healthpb.HealthCheckRequest{Service: "lab"})
	if err != nil {
		t.Fatal(err)
	}
	want := []healthpb.HealthCheckResponse_ServingStatus{healthpb.HealthCheckResponse_SERVICE_UNKNOWN, healthpb.HealthCheckResponse_SERVING, healthpb.HealthCheckResponse_NOT_SERVING}
	for i, ws := range want {
		r, err := w.Recv()
		if err != nil {
			t.Fatalf("Watch update %d: %v", i, err)
		}
		if r.Status != ws {
			t.Fatalf("Watch update %d = %v, want %v", i, r.Status, ws)
		}
		if i == 0 {
			hs.SetServingStatus("lab", healthpb.HealthCheckResponse_SERVING)
		}
		if i == 1 {
			hs.SetServingStatus("lab", healthpb.HealthCheckResponse_NOT_SERVING)
		}
	}

	pulls := p.Pulls()
	wantPulls := []nodelab.PullRecord{
		{Image: "lab/app:1", Auth: true, Username: true, Password: true},
		{Image: "fail", Auth: true, ServerAddress: "https://reg.example", IdentityToken: true},
		{Image: "anon"},
	}
	if len(pulls) != len(wantPulls) {
		t.Fatalf("recorded %+v, want %+v", pulls, wantPulls)
	}
	for i := range pulls {
		if pulls[i] != wantPulls[i] {
			t.Errorf("record %d = %+v, want %+v", i, pulls[i], wantPulls[i])
		}
	}
	m := p.Methods()
	if m["/runtime.v1.ImageService/PullImage"] != 3 || m["/grpc.health.v1.Health/Watch"] != 1 || m["/runtime.v1.ImageService/ListImages"] != 1 {
		t.Errorf("methods through the proxy: %v", m)
	}
	if bad := p.Undecoded(); len(bad) > 0 {
		t.Errorf("undecoded PullImage requests: %v", bad)
	}
}
