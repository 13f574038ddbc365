package azure

import "github.com/pullpath/pullpath/internal/verdict"

// APIVersion and Kind of the JSON document `pullpath azure -o json` prints.
const (
	APIVersion = "pullpath.dev/v1alpha1"
	Kind       = "AzureReport"
	// SourceControlPlane marks a verdict read from Azure's configuration;
	// SourceDataPlane one taken on the wire (a probe).
	SourceControlPlane = "control-plane"
	SourceDataPlane    = "data-plane"
)

// Report is the answer of `pullpath azure`: every node pool's private path
// to the registry as Azure's configuration describes it.
type Report struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Source     string            `json:"source"`
	Input      Input             `json:"input"`
	Endpoints  []Endpoint        `json:"endpoints"`
	Pools      []PoolReport      `json:"pools"`
	Verdict    Verdict           `json:"verdict"`
	Warnings   []verdict.Warning `json:"warnings"`
}

// Input says where the configuration came from.
type Input struct {
	// Mode is "sdk" (read through the Azure SDK) or "az" (az CLI dumps).
	Mode     string `json:"mode"`
	Dir      string `json:"dir,omitempty"`
	Cluster  string `json:"cluster,omitempty"`
	Registry string `json:"registry,omitempty"`
	Zone     string `json:"zone,omitempty"`
}

// Endpoint is one FQDN the pull needs and the private address it must
// resolve to.
type Endpoint struct {
	FQDN string       `json:"fqdn"`
	IP   string       `json:"ip"`
	Role verdict.Role `json:"role"`
	// PrivateEndpoint names the private endpoint whose DNS configuration
	// lists the FQDN; empty for a target given by hand.
	PrivateEndpoint string `json:"private_endpoint,omitempty"`
	// Subnet is the private endpoint's subnet ID.
	Subnet string `json:"subnet,omitempty"`
	// From names the dump (or ARM read) that gave the FQDN its address.
	From string `json:"from,omitempty"`
}

// Verdict is a verdict of the shared vocabulary with where it came from,
// the Azure setting it rests on, and whether Azure's configuration proves
// it (certain) or only cannot rule it out.
type Verdict struct {
	verdict.Verdict
	Source  string `json:"source"`
	Setting string `json:"setting,omitempty"`
	Certain bool   `json:"certain"`
	// From names the dumps (or ARM reads) that prove a certain verdict.
	From []string `json:"from,omitempty"`
	// Settle is the command whose output would settle an uncertain one.
	Settle string `json:"settle,omitempty"`
}

// PoolReport is one node pool's path.
type PoolReport struct {
	Name         string     `json:"name"`
	Subnet       string     `json:"subnet"`
	SubnetPrefix []string   `json:"subnet_prefix"`
	VNet         string     `json:"vnet"`
	DNSServers   []string   `json:"dns_servers"`
	NIC          string     `json:"nic,omitempty"`
	RoutesFrom   string     `json:"routes_from"`
	Checks       []Check    `json:"checks"`
	Verdict      Verdict    `json:"verdict"`
	Agreement    *Agreement `json:"agreement,omitempty"`
}

// The steps of a pool's check, in the order a pull needs them.
const (
	StepEndpoints = "endpoints"
	StepDNS       = "dns"
	StepRoute     = "route"
	StepSecurity  = "security"
	StepReturn    = "return"
)

// Check is one finding for one endpoint (or the whole pool).
type Check struct {
	Step     string `json:"step"`
	Endpoint string `json:"endpoint,omitempty"`
	OK       bool   `json:"ok"`
	// Certain is false where the control plane cannot see the answer
	// (custom DNS forwarding, on-premises return routes, appliances).
	Certain bool   `json:"certain"`
	Skipped bool   `json:"skipped,omitempty"`
	Cause   string `json:"cause,omitempty"`
	Summary string `json:"summary"`
	// Setting is the Azure setting that decides, named as a person would
	// find it in the portal or the az CLI.
	Setting string `json:"setting,omitempty"`
	// From names the dumps (or ARM reads) the finding rests on; a
	// certain check always names at least one.
	From []string `json:"from,omitempty"`
	// Settle is the command (az CLI, or a check outside Azure) whose
	// output would settle an uncertain check.
	Settle string      `json:"settle,omitempty"`
	Route  *RouteMatch `json:"route,omitempty"`
	Rule   *RuleMatch  `json:"rule,omitempty"`
	role   verdict.Role
}

// RouteMatch is the route that longest-prefix match picked for an address.
type RouteMatch struct {
	IP          string   `json:"ip"`
	Prefix      string   `json:"prefix,omitempty"`
	NextHopType string   `json:"next_hop_type"`
	NextHopIP   []string `json:"next_hop_ip"`
	Source      string   `json:"source,omitempty"`
	Route       string   `json:"route,omitempty"`
	RouteTable  string   `json:"route_table,omitempty"`
}

// RuleMatch is the security rule that decided a flow.
type RuleMatch struct {
	NSG       string `json:"nsg,omitempty"`
	Rule      string `json:"rule"`
	Access    string `json:"access"`
	Priority  int32  `json:"priority"`
	Direction string `json:"direction"`
}

// Agreement compares the control-plane verdict of a pool with a data-plane
// verdict for the same pool (a probe run on one of its nodes).
type Agreement struct {
	DataPlane DataPlaneVerdict `json:"data_plane"`
	Agree     bool             `json:"agree"`
	Summary   string           `json:"summary"`
}

// DataPlaneVerdict is the part of a probe's verdict the comparison uses.
type DataPlaneVerdict struct {
	OK       bool          `json:"ok"`
	Layer    verdict.Layer `json:"layer"`
	Cause    string        `json:"cause"`
	Role     verdict.Role  `json:"role,omitempty"`
	Endpoint string        `json:"endpoint,omitempty"`
	Node     string        `json:"node,omitempty"`
	From     string        `json:"from"`
	Source   string        `json:"source"`
}
