package registry

import (
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/pullpath/pullpath/internal/verdict"
)

// rangeKey carries a request's Range header value through do to
// newRequest (the session is shared by the blob workers, so the header
// cannot live on it).
type rangeKey struct{}

func withRange(ctx context.Context, offset int64) context.Context {
	return context.WithValue(ctx, rangeKey{}, fmt.Sprintf("bytes=%d-", offset))
}

// blobRanged downloads blob d with the request shape of containerd 2.1+'s
// parallel layer fetch (core/remotes/docker/fetcher.go open, 2.2.9), used
// when concurrent_layer_fetch_buffer is set (Session.RangeChunk): a first
// GET with "Range: bytes=0-", which the blob host must answer 206, or 200
// (containerd then reads the whole body with one request), or a
// Content-Range starting at "bytes 0-"; then, when the body is longer than
// one chunk, one GET per further chunk with "Range: bytes=<offset>-", each
// read for one chunk and closed. containerd sends the chunk requests in
// parallel; here they go one after the other, so that the digest is
// computed in order: the shape of every request is the same.
func (s *Session) blobRanged(ctx context.Context, d Descriptor, progress Progress) (BlobResult, error) {
	start := time.Now()
	res := BlobResult{Host: s.Host.Host}
	u := s.url("blobs", d.Digest.String())
	resp, err := s.do(withRange(ctx, 0), http.MethodGet, u, "", false)
	if err != nil {
		return res, err
	}
	res.Host = resp.Request.URL.Host
	res.Ranges = 1
	servedRole, servedEP := s.Host.Role, s.Host.endpoint()
	if resp.Request.URL.Host != s.Host.Host {
		servedRole, servedEP = verdict.RoleBlob, Endpoint(resp.Request.URL.Scheme, resp.Request.URL.Host)
	}
	if resp.StatusCode >= 300 {
		return res, s.statusError(resp, s.Host.Role, s.Host.endpoint(), false)
	}
	if err := d.Digest.Validate(); err != nil {
		resp.Body.Close()
		return res, verdict.Wrap(verdict.CodeManifestInvalid, s.Host.Role, s.Host.endpoint(), err)
	}
	var h hash.Hash
	if d.Digest.Algorithm() == digest.SHA256 {
		h = sha256.New()
	} else {
		h = d.Digest.Algorithm().Hash()
	}
	chunk := s.RangeChunk
	total := resp.ContentLength
	if resp.StatusCode != http.StatusPartialContent {
		if cr := resp.Header.Get("Content-Range"); cr != "" && !strings.HasPrefix(cr, "bytes 0-") {
			resp.Body.Close()
			return res, verdict.Errorf(verdict.CodeRegistryProtocol, servedRole, servedEP, "blob %s: the answer to \"Range: bytes=0-\" has Content-Range %q: containerd fails the pull (\"unhandled content range in response\")", d.Digest, cr)
		}
		// The host ignored the range: containerd reads the whole body.
		res.RangeIgnored = true
		chunk = 1 << 62
	}
	if total < 0 || total <= chunk {
		chunk = 1 << 62
	}
	limit := d.Size
	if limit <= 0 {
		limit = 1 << 40
	}
	var n int64
	read := func(body io.ReadCloser, max int64) error {
		defer body.Close()
		buf := bufPool.Get().(*[]byte)
		defer bufPool.Put(buf)
		m, err := io.CopyBuffer(h, io.LimitReader(&progressReader{r: body, progress: progress}, max), *buf)
		n += m
		return err
	}
	if err := read(resp.Body, min(chunk, limit+1)); err != nil {
		res.Bytes, res.Duration = n, time.Since(start)
		return res, transportError(err, servedRole, servedEP, true)
	}
	for off := chunk; off < total && off < limit; off += chunk {
		r, err := s.do(withRange(ctx, off), http.MethodGet, u, "", false)
		if err != nil {
			res.Bytes, res.Duration = n, time.Since(start)
			return res, err
		}
		res.Ranges++
		if r.StatusCode >= 300 {
			res.Bytes, res.Duration = n, time.Since(start)
			return res, s.statusError(r, s.Host.Role, s.Host.endpoint(), false)
		}
		if err := read(r.Body, chunk); err != nil {
			res.Bytes, res.Duration = n, time.Since(start)
			return res, transportError(err, servedRole, servedEP, true)
		}
	}
	res.Bytes, res.Duration = n, time.Since(start)
	if d.Size > 0 && n != d.Size {
		return res, verdict.Errorf(verdict.CodeTransferSize, servedRole, servedEP, "blob %s: got %d bytes in %d range request(s), want %d", d.Digest, n, res.Ranges, d.Size)
	}
	if got := digest.NewDigestFromBytes(d.Digest.Algorithm(), h.Sum(nil)); got != d.Digest {
		return res, verdict.Errorf(verdict.CodeTransferDigest, servedRole, servedEP, "blob %s: content fetched in %d range request(s) has digest %s", d.Digest, res.Ranges, got)
	}
	res.Verified = true
	return res, nil
}
