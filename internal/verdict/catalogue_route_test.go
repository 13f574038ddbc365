package verdict

import (
	"strings"
	"testing"
)

// TestMTUCauses checks the path-MTU cause's vocabulary: route layer,
// network owner, the mechanism and the three fixes, and no "blob host
// unreachable" line for a blob host that small packets reach.
func TestMTUCauses(t *testing.T) {
	if l, o := LayerOf("route.mtu"), OwnerOf("route.mtu"); l != LayerRoute || o != OwnerNetwork {
		t.Errorf("route.mtu = %s/%s, want route/network", l, o)
	}
	d := Describe("route.mtu", RoleBlob, "blob.example:443")
	for _, want := range []string{"ICMP fragmentation-needed", "blob host blob.example:443"} {
		if !strings.Contains(d.Summary, want) {
			t.Errorf("Describe(route.mtu).Summary = %q, want it to contain %q", d.Summary, want)
		}
	}
	next := strings.Join(d.Next, "\n")
	for _, want := range []string{"Clamp the TCP MSS", "tunnel's MTU", "ICMP type 3 code 4"} {
		if !strings.Contains(next, want) {
			t.Errorf("Describe(route.mtu).Next = %q, want %q among them", d.Next, want)
		}
	}
	if strings.Contains(next, "Only the manifest endpoint is reachable") {
		t.Errorf("Describe(route.mtu, blob).Next says the blob host is unreachable: %q", d.Next)
	}
	if l := LayerOf("transfer.stall"); l != LayerTransfer {
		t.Errorf("transfer.stall layer = %s, want transfer", l)
	}
}

// TestRegisterTwicePanics: a second entry with a code already in the
// catalogue (two merged branches adding the same code) stops the program
// instead of silently replacing the first.
func TestRegisterTwicePanics(t *testing.T) {
	before, _ := Lookup(CodeRouteMTU)
	defer func() {
		if recover() == nil {
			t.Error("registering route.mtu twice did not panic")
		}
		if after, _ := Lookup(CodeRouteMTU); after.Summary != before.Summary {
			t.Error("the second registration replaced the first")
		}
	}()
	register(Cause{Code: CodeRouteMTU, Layer: LayerRoute, Summary: "a second one"})
}
