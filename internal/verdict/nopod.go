package verdict

func init() {
	register(Cause{Code: "unknown.no-pod", Layer: LayerUnknown, Owner: OwnerApp,
		Summary: "The workload has no pod, so no node has tried to pull its image.",
		Next: []string{"Read why the controller creates no pod: `kubectl describe` the workload and its ReplicaSet (FailedCreate events: quota, LimitRange, admission webhooks, PodSecurity), and check spec.replicas.",
			"Once a pod exists and fails to pull, run `pullpath diagnose` again."}})
}
