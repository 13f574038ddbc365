package cluster

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
)

// ErrNoKubeconfig is wrapped by CheckKubeconfig's error when no kubeconfig
// names any cluster.
var ErrNoKubeconfig = errors.New("no kubeconfig found")

// CheckKubeconfig reads the kubeconfig the flags point at before any
// request is made, so that a missing or unreadable one is reported as such
// (kubectl would otherwise fall back to http://localhost:8080). It returns
// nil when a cluster is configured: by the kubeconfig, by --server, or by
// the in-cluster service account.
func CheckKubeconfig(flags *genericclioptions.ConfigFlags) error {
	raw, err := flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return fmt.Errorf("reading kubeconfig: %w", err)
	}
	if len(raw.Clusters) > 0 || (flags.APIServer != nil && *flags.APIServer != "") {
		return nil
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" && os.Getenv("KUBERNETES_SERVICE_PORT") != "" {
		return nil
	}
	var looked []string
	if flags.KubeConfig != nil && *flags.KubeConfig != "" {
		looked = append(looked, *flags.KubeConfig+" (--kubeconfig)")
	} else {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		src := "$KUBECONFIG"
		if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
			src = "the default"
		}
		for _, p := range rules.GetLoadingPrecedence() {
			looked = append(looked, p+" ("+src+")")
		}
	}
	return fmt.Errorf("%w: looked in %s, and no in-cluster service account; pass --kubeconfig, set KUBECONFIG or use --server", ErrNoKubeconfig, strings.Join(looked, ", "))
}
