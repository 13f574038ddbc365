package cluster

import (
	"slices"
	"strings"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
)

// imageRef is an image reference in the forms a node may list it under.
type imageRef struct {
	raw       string
	canonical string // docker.io/library/nginx:1.25 (or @sha256:… when pinned)
	repo      string // docker.io/library/nginx
	host      string // docker.io, myreg.azurecr.io, registry:5000
	path      string // library/nginx
	digest    string // sha256:… when pinned
	// names are the exact strings a node's status.images may use for this
	// tag: canonical and familiar forms.
	names map[string]bool
	ok    bool
}

// parseImage normalises ref the way containerd names images.
func parseImage(raw string) imageRef {
	r := imageRef{raw: raw, names: map[string]bool{raw: true}}
	named, err := reference.ParseNormalizedNamed(raw)
	if err != nil {
		return r
	}
	r.ok = true
	r.repo = named.Name()
	r.host = reference.Domain(named)
	r.path = reference.Path(named)
	if d, ok := named.(reference.Digested); ok {
		r.digest = d.Digest().String()
	}
	tagged := reference.TagNameOnly(named)
	if t, ok := tagged.(reference.Tagged); ok && r.digest == "" {
		r.canonical = r.repo + ":" + t.Tag()
		r.names[r.canonical] = true
		r.names[reference.FamiliarString(tagged)] = true
	}
	if r.digest != "" {
		r.canonical = r.repo + "@" + r.digest
		r.names[r.canonical] = true
		if t, ok := named.(reference.Tagged); ok {
			r.names[r.repo+":"+t.Tag()] = true
		}
	}
	return r
}

// digestOf returns the sha256:… part of an image name or imageID such as
// "docker.io/library/nginx@sha256:…" or "docker-pullable://…@sha256:…", or "".
func digestOf(s string) string {
	i := strings.LastIndexByte(s, '@')
	if i < 0 || !strings.HasPrefix(s[i+1:], "sha256:") {
		return ""
	}
	return s[i+1:]
}

// cacheMatch reports whether a node's image list holds the image, by one of
// its names or by one of the digests it is known by, and how.
func cacheMatch(images []corev1.ContainerImage, ref *imageRef, digests map[string]bool) string {
	byDigest := false
	for i := range images {
		for _, n := range images[i].Names {
			if ref.names[n] {
				return "name"
			}
			if !byDigest && len(digests) > 0 {
				if d := digestOf(n); d != "" && digests[d] {
					byDigest = true
				}
			}
		}
	}
	if byDigest {
		return "digest"
	}
	return ""
}

// sameImage reports whether an image string from a container status names
// the same reference as ref.
func sameImage(s string, ref *imageRef) bool {
	if ref.names[s] {
		return true
	}
	o := parseImage(s)
	return o.ok && ref.ok && o.canonical == ref.canonical
}

// workloadRepos are the repositories of every container of spec, as the
// kubelet looks them up.
func workloadRepos(spec *corev1.PodSpec) []string {
	var out []string
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range cs {
			if r := parseImage(c.Image); r.ok && !slices.Contains(out, r.repo) {
				out = append(out, r.repo)
			}
		}
	}
	return out
}

// expectedProvider names the kubelet credential provider a registry host is
// usually served by, or "".
func expectedProvider(host string) string {
	h := strings.ToLower(host)
	switch {
	case strings.HasSuffix(h, ".azurecr.io"), strings.HasSuffix(h, ".azurecr.cn"),
		strings.HasSuffix(h, ".azurecr.de"), strings.HasSuffix(h, ".azurecr.us"):
		return "acr-credential-provider (AKS: the kubelet identity needs AcrPull on the registry, e.g. az aks update --attach-acr)"
	case strings.Contains(h, ".dkr.ecr.") && strings.Contains(h, ".amazonaws.com"):
		return "ecr-credential-provider (EKS: the node IAM role needs AmazonEC2ContainerRegistryReadOnly)"
	case strings.HasSuffix(h, "-docker.pkg.dev"), h == "gcr.io", strings.HasSuffix(h, ".gcr.io"):
		return "auth-provider-gcp (GKE: the node service account needs Artifact Registry Reader)"
	}
	return ""
}
