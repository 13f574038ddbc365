# The commands a contributor runs; CONTRIBUTING.md describes each target.
# `make test` is the test command; .ci/run installs what every tier needs
# and then runs the same scripts.

GO ?= go
# staticcheck, pinned: the newest release that supports Go 1.26.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
# The embedded-lab tier: probe and demo against the lab on loopback.
LAB_PKGS := ./internal/lab/... ./internal/probe/... ./internal/cli/... ./internal/demo/...
# Root tiers take the shared lock; RUN=TestX narrows them.
LOCK := flock /tmp/pp-netns.lock
RUNFLAG = $(if $(RUN),-run '$(RUN)')

.PHONY: test unit lab race netlab nodes lint docs crossbuild fuzz

test:
	bash hack/test.sh

unit:
	$(GO) test -count=1 $$($(GO) list ./... | grep -v -e /internal/lab -e /internal/probe -e /internal/cli -e /internal/demo -e /test/netlab -e /test/nodelab)

lab:
	$(GO) test -count=1 $(LAB_PKGS)

race:
	bash hack/race.sh

netlab:
	PULLPATH_NETLAB=1 $(LOCK) $(GO) test -count=1 -v $(RUNFLAG) ./test/netlab/ ./internal/cri/...

nodes:
	PULLPATH_KUBE_BIN=$$(bash tools/kube/build.sh) PULLPATH_NODELAB=1 $(LOCK) $(GO) test -count=1 -timeout 30m -v $(RUNFLAG) ./test/nodelab/

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(STATICCHECK) ./...

docs:
	$(GO) test -count=1 ./internal/cli -run TestCausesDoc -update
	$(GO) test -count=1 ./internal/verdict -run TestCodesFile -update
	$(GO) test -count=1 ./cmd/pullpath -run TestCommandsDoc -update

crossbuild:
	CROSSBUILD_NOLINK=1 CROSSBUILD_JOBS=2 bash hack/crossbuild.sh

fuzz:
	bash hack/fuzz.sh
