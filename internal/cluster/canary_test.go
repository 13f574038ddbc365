package cluster

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
)

// TestDiagnoseCredentialCanary gives diagnose a pull secret whose password
// is the fixture's canary and events in which a runtime or proxy echoed the
// credentials back (Go's header-map form, a dumped header, a form body),
// and greps the text and JSON reports for the password in each form it can
// take: as it is, base64 of user:password, URL-encoded and JSON-escaped.
func TestDiagnoseCredentialCanary(t *testing.T) {
	f := clustertest.AKS(fixtureNow)
	const user = "00000000-0000-0000-0000-000000000000"
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + clustertest.SecretToken))
	echoes := []string{
		" (request headers map[Authorization:[Basic " + basic + "] User-Agent:[containerd/2.0]])",
		"; proxy said: Authorization: Basic " + basic,
		"; body grant_type=password&username=" + user + "&password=" + url.QueryEscape(clustertest.SecretToken),
	}
	n := 0
	for i := range f.Events {
		if f.Events[i].Message == clustertest.FailedPullMessage || f.Events[i].Message == clustertest.UnauthorizedMessage {
			f.Events[i].Message += echoes[n%len(echoes)]
			n++
		}
	}
	if n == 0 {
		t.Fatal("the fixture has no failed-pull event to echo credentials into")
	}
	js, _ := json.Marshal(clustertest.SecretToken)
	forms := []string{clustertest.SecretToken, basic, url.QueryEscape(clustertest.SecretToken), strings.Trim(string(js), `"`)}
	for _, ref := range []WorkloadRef{
		{Kind: KindDeployment, Name: "app", Namespace: clustertest.Namespace},
		{Kind: KindPod, Name: clustertest.BarePod, Namespace: clustertest.Namespace},
	} {
		r := diagnoseFake(t, f, ref)
		var text bytes.Buffer
		if err := WriteText(&text, r); err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, out := range []string{text.String(), string(data)} {
			for _, form := range forms {
				if strings.Contains(out, form) {
					t.Errorf("diagnose %s shows the pull secret's password as %q", ref, form)
				}
			}
		}
	}
}
