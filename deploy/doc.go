// Package deploy holds the ways to run deltasync for real — the container
// image (Dockerfile), Kubernetes manifests (kustomize base, components and
// overlays) and a Helm chart (helm/deltasync) for the same objects, a
// hardened systemd unit, and the Prometheus alert rules and
// Grafana dashboard — and the tests that keep them honest.
//
// It is a Go package only for those tests: they render every kustomize
// overlay and the Helm chart and assert on the objects (the chart's defaults
// must equal the kustomize manifests'), check the release artifacts and
// scan them for vulnerabilities, parse the Dockerfile, verify the systemd
// unit with systemd-analyze, run promtool over the alert rules and their unit
// tests, and check that every metric the alerts and the dashboard use is one
// that the sync package registers. Nothing here is imported by the binary.
//
// Invariants: every overlay renders; every container runs as a non-root user
// with a read-only root filesystem and no capabilities; alerts and dashboards
// use only the metric names of the team contract.
package deploy
