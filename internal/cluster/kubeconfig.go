package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pullpath/pullpath/internal/cluster/kube"
)

// ErrNoKubeconfig is returned when no kubeconfig file exists where kubectl
// looks, no --server is given and the process is not in a cluster.
var ErrNoKubeconfig = errors.New("no kubeconfig found")

// KubeFlags are kubectl's connection flags (--kubeconfig, --context,
// --cluster, --user, -n, --as, --token, --server, --request-timeout, ...),
// with kubectl's names, help and precedence, built on client-go's clientcmd
// loading rules and ConfigOverrides. It replaces cli-runtime's ConfigFlags,
// whose kustomize dependency links Go's plugin package into the binary.
type KubeFlags struct {
	kubeconfig string
	cacheDir   string
	userExtra  []string
	overrides  clientcmd.ConfigOverrides

	// env reads the environment; tests replace it.
	env func(string) string
	// inCluster returns why the in-cluster service account config is not
	// usable, nil when it is; tests replace it.
	inCluster func() error
}

// NewKubeFlags returns kubectl's connection flags with kubectl's defaults.
func NewKubeFlags() *KubeFlags {
	return &KubeFlags{
		overrides: clientcmd.ConfigOverrides{ClusterDefaults: clientcmd.ClusterDefaults},
		env:       os.Getenv,
		inCluster: func() error { _, err := rest.InClusterConfig(); return err },
	}
}

// AddFlags registers the flags on fs, with the names, short names and help
// texts kubectl uses.
func (k *KubeFlags) AddFlags(fs *pflag.FlagSet) {
	names := clientcmd.RecommendedConfigOverrideFlags("")
	// kubectl's wording and short names (cli-runtime's ConfigFlags), and no
	// --username/--password: kubectl dropped basic auth from its flags.
	names.ClusterOverrideFlags.APIServer.ShortName = "s"
	names.ClusterOverrideFlags.TLSServerName.Description = "Server name to use for server certificate validation. If it is not provided, the hostname used to contact the server is used"
	names.ClusterOverrideFlags.ProxyURL.Description = "Proxy URL to use for requests to the API server"
	names.AuthOverrideFlags.Impersonate.Description = "Username to impersonate for the operation. User could be a regular user or a service account in a namespace."
	names.AuthOverrideFlags.ImpersonateUID.Description = "UID to impersonate for the operation."
	names.AuthOverrideFlags.Username.LongName = ""
	names.AuthOverrideFlags.Password.LongName = ""
	clientcmd.BindOverrideFlags(&k.overrides, fs, names)
	fs.StringVar(&k.kubeconfig, clientcmd.RecommendedConfigPathFlag, "", "Path to the kubeconfig file to use for CLI requests.")
	fs.StringArrayVar(&k.userExtra, "as-user-extra", nil, "User extras to impersonate for the operation, this flag can be repeated to specify multiple values for the same key.")
	// Accepted like kubectl's; pullpath reads no discovery data to cache.
	fs.StringVar(&k.cacheDir, "cache-dir", filepath.Join(homedir(k.env), ".kube", "cache"), "Default cache directory")
}

func homedir(env func(string) string) string {
	if env == nil {
		env = os.Getenv
	}
	if h := env("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// loadingRules are kubectl's: --kubeconfig, else every file in $KUBECONFIG,
// else ~/.kube/config.
func (k *KubeFlags) loadingRules() *clientcmd.ClientConfigLoadingRules {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: k.kubeconfig}
	if list := k.env(clientcmd.RecommendedConfigPathEnvVar); list != "" {
		rules.Precedence = filepath.SplitList(list)
	} else {
		rules.Precedence = []string{filepath.Join(homedir(k.env), clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)}
	}
	return rules
}

func (k *KubeFlags) clientConfig() (clientcmd.ClientConfig, error) {
	rules := k.loadingRules()
	if err := k.checkFound(rules); err != nil {
		return nil, err
	}
	o := k.overrides
	if len(k.userExtra) > 0 {
		o.AuthInfo.ImpersonateUserExtra = map[string][]string{}
		for _, e := range k.userExtra {
			key, value, ok := strings.Cut(e, "=")
			if !ok {
				return nil, fmt.Errorf("invalid --as-user-extra %q: want KEY=VALUE", e)
			}
			o.AuthInfo.ImpersonateUserExtra[key] = append(o.AuthInfo.ImpersonateUserExtra[key], value)
		}
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &o), nil
}

// checkFound returns ErrNoKubeconfig, saying where it looked, when there is
// nothing to load: no --kubeconfig, no file of the precedence list, no
// --server and no in-cluster config. An explicit --kubeconfig that cannot be
// read is an error of its own.
func (k *KubeFlags) checkFound(rules *clientcmd.ClientConfigLoadingRules) error {
	if rules.ExplicitPath != "" {
		if _, err := os.Stat(rules.ExplicitPath); err != nil {
			return fmt.Errorf("reading kubeconfig %s: %w", rules.ExplicitPath, err)
		}
		return nil
	}
	var looked []string
	for _, p := range rules.Precedence {
		_, err := os.Stat(p)
		if err == nil {
			return nil
		}
		why := "no such file"
		if !errors.Is(err, fs.ErrNotExist) {
			why = err.Error()
		}
		looked = append(looked, fmt.Sprintf("%s (%s)", p, why))
	}
	if k.overrides.ClusterInfo.Server != "" {
		return nil
	}
	icErr := k.inCluster()
	if icErr == nil {
		return nil
	}
	where := "$KUBECONFIG is not set, looked at " + strings.Join(looked, ", ")
	if k.env(clientcmd.RecommendedConfigPathEnvVar) != "" {
		where = "looked at $KUBECONFIG: " + strings.Join(looked, ", ")
	}
	inCluster := "KUBERNETES_SERVICE_HOST is not set"
	if !errors.Is(icErr, rest.ErrNotInCluster) {
		inCluster = icErr.Error()
	}
	return fmt.Errorf("%w (%s; not in a cluster: %s); use --kubeconfig, set KUBECONFIG or pass --server",
		ErrNoKubeconfig, where, inCluster)
}

// IsConfigError reports whether err is a problem of the kubeconfig or the
// connection flags (missing, unreadable or invalid), which is the user's
// input, not a failure of the cluster.
func IsConfigError(err error) bool {
	var ce *configError
	return errors.As(err, &ce)
}

type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// Namespace returns -n, else the namespace of the kubeconfig context in use,
// else the in-cluster service account's, else "default", as kubectl does.
func (k *KubeFlags) Namespace() (string, error) {
	cc, err := k.clientConfig()
	if err != nil {
		return "", &configError{err}
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return "", &configError{fmt.Errorf("reading kubeconfig: %w", err)}
	}
	return ns, nil
}

// RESTConfig returns the client configuration the flags and the kubeconfig
// select.
func (k *KubeFlags) RESTConfig() (*rest.Config, error) {
	cc, err := k.clientConfig()
	if err != nil {
		return nil, &configError{err}
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, &configError{fmt.Errorf("loading kubeconfig: %w", err)}
	}
	return cfg, nil
}

// Clientset returns a client (kube.Client) for the cluster the flags select, with
// pullpath's user agent, request timeout and rate limits.
func (k *KubeFlags) Clientset() (kube.Interface, error) {
	cfg, err := k.RESTConfig()
	if err != nil {
		return nil, err
	}
	return NewClientset(cfg)
}
