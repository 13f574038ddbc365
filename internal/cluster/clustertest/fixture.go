package clustertest

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The fixture's names, for assertions.
const (
	Namespace   = "shop"
	Image       = "myacr.azurecr.io/team/app:1.2"
	ImageDigest = "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
	Deployment  = "app"
	ReplicaSet  = "app-7d9f8c6b5d"
	// FailingPod landed on NewNode, the first node of the user2 pool that a
	// scale-up created; FailingPod2 on NewNode2.
	FailingPod  = "app-7d9f8c6b5d-x2kqp"
	FailingPod2 = "app-7d9f8c6b5d-m8zrt"
	NewNode     = "aks-user2-34567890-vmss000000"
	NewNode2    = "aks-user2-34567890-vmss000001"
	// BarePod is a pod of its own failing with a 401.
	BarePod = "batch-runner"
	// SecretToken is the password inside the acr-pull secret; it must
	// never appear in any output.
	SecretToken = "s3cr3t-ACR-t0ken-do-not-print"
	// RegistryIP is the private endpoint address the pull times out on.
	RegistryIP = "10.1.2.3"
)

// FailedPullMessage is the kubelet's detailed event for the fixture's
// failing pull (MS support article shape, containerd 1.7).
const FailedPullMessage = `Failed to pull image "myacr.azurecr.io/team/app:1.2": rpc error: code = Unknown desc = failed to pull and unpack image "myacr.azurecr.io/team/app:1.2": failed to resolve reference "myacr.azurecr.io/team/app:1.2": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.2": dial tcp 10.1.2.3:443: i/o timeout`

// BackOffMessage is the kubelet's back-off event that follows it.
const BackOffMessage = `Back-off pulling image "myacr.azurecr.io/team/app:1.2"`

// UnauthorizedMessage is the bare pod's failure.
const UnauthorizedMessage = `Failed to pull image "myacr.azurecr.io/tools/runner:7": rpc error: code = Unknown desc = failed to pull and unpack image "myacr.azurecr.io/tools/runner:7": failed to resolve reference "myacr.azurecr.io/tools/runner:7": failed to authorize: failed to fetch oauth token: unexpected status: 401 Unauthorized`

// Fixture is a cluster's worth of objects. UIDs are set so that owner
// references hold in a fake clientset; Load rewrites them for a real API
// server.
type Fixture struct {
	Now             time.Time
	Nodes           []corev1.Node
	Namespaces      []corev1.Namespace
	ServiceAccounts []corev1.ServiceAccount
	Secrets         []corev1.Secret
	Deployments     []appsv1.Deployment
	ReplicaSets     []appsv1.ReplicaSet
	Pods            []corev1.Pod
	// Events are core/v1 events (pods in Namespace, nodes in default).
	Events []corev1.Event
}

const (
	oldVersion = "AKSUbuntu-2204gen2containerd-202409.23.0"
	newVersion = "AKSUbuntu-2204gen2containerd-202411.12.0"
)

func node(name, pool, mode, arch, version string, created time.Time, taints []corev1.Taint, images []corev1.ContainerImage) corev1.Node {
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			CreationTimestamp: metav1.NewTime(created),
			Labels: map[string]string{
				"kubernetes.azure.com/agentpool":          pool,
				"agentpool":                               pool,
				"kubernetes.azure.com/mode":               mode,
				"kubernetes.azure.com/node-image-version": version,
				"kubernetes.azure.com/role":               "agent",
				"kubernetes.io/os":                        "linux",
				"kubernetes.io/arch":                      arch,
				"kubernetes.io/hostname":                  name,
				"node.kubernetes.io/instance-type":        "Standard_D4s_v5",
			},
		},
		Spec: corev1.NodeSpec{Taints: taints, ProviderID: "azure:///subscriptions/0000/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachineScaleSets/" + name},
		Status: corev1.NodeStatus{
			Images: images,
			NodeInfo: corev1.NodeSystemInfo{
				OperatingSystem: "linux", Architecture: arch, KubeletVersion: "v1.30.5",
				ContainerRuntimeVersion: "containerd://1.7.22-1", OSImage: "Ubuntu 22.04.5 LTS",
			},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.NewTime(created), LastTransitionTime: metav1.NewTime(created)}},
		},
	}
}

func img(size int64, names ...string) corev1.ContainerImage {
	return corev1.ContainerImage{Names: names, SizeBytes: size}
}

func systemImages() []corev1.ContainerImage {
	return []corev1.ContainerImage{
		img(120e6, "mcr.microsoft.com/oss/kubernetes/kube-proxy@sha256:1111111111111111111111111111111111111111111111111111111111111111", "mcr.microsoft.com/oss/kubernetes/kube-proxy:v1.30.5"),
		img(60e6, "mcr.microsoft.com/oss/kubernetes/azure-cni:v1.6.3"),
		img(50e6, "mcr.microsoft.com/oss/kubernetes/coredns:v1.11.3-1"),
	}
}

func appImages() []corev1.ContainerImage {
	return append(systemImages(), img(250e6, "myacr.azurecr.io/team/app@"+ImageDigest, Image))
}

// fullImageList is 50 images (the kubelet's default cap) without the app.
func fullImageList() []corev1.ContainerImage {
	out := systemImages()
	for i := len(out); i < 50; i++ {
		out = append(out, img(int64(900e6-i*1e6), fmt.Sprintf("myacr.azurecr.io/ml/model-%02d:latest", i)))
	}
	return out
}

// AKS builds the fixture: an AKS-like cluster with four pools.
//
//   - system: 2 nodes, 90 days old, tainted CriticalAddonsOnly (ineligible).
//   - user1: 3 nodes, 60 days old, all holding the image; 3 replicas run there.
//   - user2: 2 nodes a scale-up created 3h and 2h ago, newer node image,
//     without the image; 2 replicas fail there with a route timeout.
//   - armpool: 1 arm64 node, 10 days old, whose image list is full (50).
//
// The deployment's pod spec names pull secret acr-pull (present, matching);
// its service account names legacy-pull (missing) and dockerhub-pull
// (present, no entry for the registry). A bare pod batch-runner fails with
// 401 and has no pull secret.
func AKS(now time.Time) *Fixture {
	f := &Fixture{Now: now}
	day := 24 * time.Hour
	critical := []corev1.Taint{{Key: "CriticalAddonsOnly", Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	f.Nodes = []corev1.Node{
		node("aks-system-12345678-vmss000000", "system", "System", "amd64", oldVersion, now.Add(-90*day), critical, systemImages()),
		node("aks-system-12345678-vmss000001", "system", "System", "amd64", oldVersion, now.Add(-90*day+time.Hour), critical, systemImages()),
		node("aks-user1-23456789-vmss000000", "user1", "User", "amd64", oldVersion, now.Add(-60*day), nil, appImages()),
		node("aks-user1-23456789-vmss000001", "user1", "User", "amd64", oldVersion, now.Add(-60*day+time.Hour), nil, appImages()),
		node("aks-user1-23456789-vmss000002", "user1", "User", "amd64", oldVersion, now.Add(-45*day), nil, appImages()),
		node(NewNode, "user2", "User", "amd64", newVersion, now.Add(-3*time.Hour), nil, systemImages()),
		node(NewNode2, "user2", "User", "amd64", newVersion, now.Add(-2*time.Hour), nil, systemImages()),
		node("aks-armpool-45678901-vmss000000", "armpool", "User", "arm64", newVersion, now.Add(-10*day), nil, fullImageList()),
	}
	f.Namespaces = []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}}
	f.ServiceAccounts = []corev1.ServiceAccount{
		{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: Namespace}},
		{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: Namespace},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "legacy-pull"}, {Name: "dockerhub-pull"}}},
	}
	f.Secrets = []corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "acr-pull", Namespace: Namespace}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"myacr.azurecr.io":{"username":"00000000-0000-0000-0000-000000000000","password":"` + SecretToken + `","auth":"MDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAwOnMzY3IzdC1BQ1ItdDBrZW4tZG8tbm90LXByaW50"}}}`)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "dockerhub-pull", Namespace: Namespace}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"https://index.docker.io/v1/":{"auth":"aHViOmh1Yi1wYXNzd29yZA=="}}}`)}},
	}

	depUID, rsUID := types.UID("d0000000-0000-0000-0000-000000000001"), types.UID("d0000000-0000-0000-0000-000000000002")
	labels := map[string]string{"app": "app"}
	spec := corev1.PodSpec{
		ServiceAccountName: "app",
		ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "acr-pull"}},
		Containers: []corev1.Container{{Name: "app", Image: Image, ImagePullPolicy: corev1.PullIfNotPresent,
			Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}},
	}
	replicas := int32(5)
	f.Deployments = []appsv1.Deployment{{
		ObjectMeta: metav1.ObjectMeta{Name: Deployment, Namespace: Namespace, UID: depUID, CreationTimestamp: metav1.NewTime(now.Add(-60 * day))},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}}
	tr := true
	rsLabels := map[string]string{"app": "app", "pod-template-hash": "7d9f8c6b5d"}
	f.ReplicaSets = []appsv1.ReplicaSet{{
		ObjectMeta: metav1.ObjectMeta{Name: ReplicaSet, Namespace: Namespace, UID: rsUID, Labels: rsLabels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: Deployment, UID: depUID, Controller: &tr}}},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: rsLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: rsLabels}, Spec: spec},
		},
	}}
	pod := func(name, nodeName string, created time.Time, running bool, waitReason, waitMsg string) corev1.Pod {
		s := *spec.DeepCopy()
		s.NodeName = nodeName
		p := corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, Labels: rsLabels, CreationTimestamp: metav1.NewTime(created),
				UID:             types.UID("p-" + name),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: ReplicaSet, UID: rsUID, Controller: &tr}}},
			Spec: s,
		}
		cs := corev1.ContainerStatus{Name: "app", Image: Image}
		if running {
			p.Status.Phase = corev1.PodRunning
			cs.Ready, cs.Started = true, &tr
			cs.ImageID = "myacr.azurecr.io/team/app@" + ImageDigest
			cs.ContainerID = "containerd://" + fmt.Sprintf("%064x", len(name))
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(created.Add(10 * time.Second))}
		} else {
			p.Status.Phase = corev1.PodPending
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: waitReason, Message: waitMsg}
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(created)}}
		return p
	}
	f.Pods = []corev1.Pod{
		pod("app-7d9f8c6b5d-4hj2k", "aks-user1-23456789-vmss000000", now.Add(-40*day), true, "", ""),
		pod("app-7d9f8c6b5d-9wq7d", "aks-user1-23456789-vmss000001", now.Add(-40*day), true, "", ""),
		pod("app-7d9f8c6b5d-tz5v8", "aks-user1-23456789-vmss000002", now.Add(-40*day), true, "", ""),
		pod(FailingPod, NewNode, now.Add(-3*time.Hour-5*time.Minute), false, "ImagePullBackOff", BackOffMessage),
		pod(FailingPod2, NewNode2, now.Add(-2*time.Hour-5*time.Minute), false, "ErrImagePull", FailedPullMessage[len(`Failed to pull image "myacr.azurecr.io/team/app:1.2": `):]),
	}
	bare := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: BarePod, Namespace: Namespace, UID: "p-batch-runner", CreationTimestamp: metav1.NewTime(now.Add(-30 * time.Minute))},
		Spec: corev1.PodSpec{NodeName: "aks-user1-23456789-vmss000002",
			Containers: []corev1.Container{{Name: "runner", Image: "myacr.azurecr.io/tools/runner:7"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "runner", Image: "myacr.azurecr.io/tools/runner:7",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "myacr.azurecr.io/tools/runner:7"`}}}}},
	}
	f.Pods = append(f.Pods, bare)

	ev := func(obj corev1.ObjectReference, typ, reason, component, msg string, first time.Time, count int32) corev1.Event {
		ns := obj.Namespace
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		return corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", obj.Name, first.UnixNano()+int64(len(reason))), Namespace: ns},
			InvolvedObject: obj, Type: typ, Reason: reason, Message: msg,
			Source:         corev1.EventSource{Component: component},
			FirstTimestamp: metav1.NewTime(first), LastTimestamp: metav1.NewTime(first.Add(time.Duration(count-1) * 5 * time.Minute)), Count: count,
		}
	}
	podRef := func(name string) corev1.ObjectReference {
		return corev1.ObjectReference{Kind: "Pod", Namespace: Namespace, Name: name, APIVersion: "v1", UID: types.UID("p-" + name)}
	}
	nodeRef := func(name string) corev1.ObjectReference {
		return corev1.ObjectReference{Kind: "Node", Name: name, APIVersion: "v1", UID: types.UID("n-" + name)}
	}
	t0 := now.Add(-3*time.Hour - 5*time.Minute)
	for i, p := range []string{FailingPod, FailingPod2} {
		start := t0.Add(time.Duration(i) * time.Hour)
		nodeName := []string{NewNode, NewNode2}[i]
		f.Events = append(f.Events,
			ev(podRef(p), "Normal", "TriggeredScaleUp", "cluster-autoscaler", fmt.Sprintf("pod triggered scale-up: [{aks-user2-34567890-vmss %d->%d (max: 10)}]", i, i+1), start.Add(2*time.Second), 1),
			ev(podRef(p), "Normal", "Scheduled", "default-scheduler", "Successfully assigned "+Namespace+"/"+p+" to "+nodeName, start.Add(5*time.Minute), 1),
			ev(podRef(p), "Normal", "Pulling", "kubelet", `Pulling image "`+Image+`"`, start.Add(5*time.Minute+3*time.Second), 4),
			ev(podRef(p), "Warning", "Failed", "kubelet", FailedPullMessage, start.Add(5*time.Minute+33*time.Second), 4),
			ev(podRef(p), "Warning", "Failed", "kubelet", "Error: ErrImagePull", start.Add(5*time.Minute+33*time.Second+time.Millisecond), 4),
			ev(podRef(p), "Normal", "BackOff", "kubelet", BackOffMessage, start.Add(6*time.Minute), 40),
			ev(podRef(p), "Warning", "Failed", "kubelet", "Error: ImagePullBackOff", start.Add(6*time.Minute+time.Millisecond), 40),
		)
	}
	f.Events = append(f.Events,
		ev(podRef(BarePod), "Warning", "Failed", "kubelet", UnauthorizedMessage, now.Add(-29*time.Minute), 6),
		ev(podRef(BarePod), "Normal", "BackOff", "kubelet", `Back-off pulling image "myacr.azurecr.io/tools/runner:7"`, now.Add(-28*time.Minute), 20),
		ev(nodeRef(NewNode), "Normal", "RegisteredNode", "node-controller", "Node "+NewNode+" event: Registered Node "+NewNode+" in Controller", now.Add(-3*time.Hour+time.Minute), 1),
		ev(nodeRef(NewNode2), "Normal", "RegisteredNode", "node-controller", "Node "+NewNode2+" event: Registered Node "+NewNode2+" in Controller", now.Add(-2*time.Hour+time.Minute), 1),
		ev(nodeRef(NewNode), "Normal", "Starting", "kubelet", "Starting kubelet.", now.Add(-3*time.Hour+30*time.Second), 1),
	)
	return f
}
