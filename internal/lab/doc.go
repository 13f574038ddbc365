// Package lab runs an in-process image-pull lab on loopback that behaves like
// a real private registry deployment: a real registry
// (github.com/distribution/distribution/v3) with token authentication, a
// separate token service host, a separate blob host that layer downloads are
// redirected to, an authoritative DNS server for the zone lab.test, TLS
// everywhere from a lab CA, and images pushed at start.
//
// Every failure scenario is served at the same time; none is switched on
// globally. A fault is chosen by the host name the client uses (DNS answer
// and TLS certificate by SNI), by the repository prefix (a small front
// handler before the registry and the blob host), or by the node root
// directory the scenario hands to the probe (resolv.conf, hosts, certs.d).
// Scenarios lists each one with the verdict a correct probe must give.
//
// The lab sends traffic only to the addresses it is given (loopback by
// default); nothing it serves or dials leaves the machine. The registry logs
// through logrus's standard logger; Start sends that logger to Options.Log,
// which discards by default.
package lab
