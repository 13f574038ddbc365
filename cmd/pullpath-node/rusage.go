package main

// envRusage, set to 1, makes pullpath-node print its own peak resident set
// to stderr when the command ends, after its output: the benchmarks read
// it where no outside watcher can, e.g. from a probe Job's log on the
// real-node tier (test/nodelab's TestProbePeakRSSOnRealNodes). Only
// Linux reports it (rusage_linux.go).
const envRusage = "PULLPATH_DEBUG_RUSAGE"
