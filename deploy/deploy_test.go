package deploy

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// TestOverlaysRender builds every overlay and checks what all of them must
// share: deltasync runs hardened, from a real image, with the config from the
// generated ConfigMap and the token Secret mounted read-only.
func TestOverlaysRender(t *testing.T) {
	config := readFile(t, filepath.Join("kubernetes", "base", "config.yaml"))
	for _, dir := range overlayDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			objs := render(t, filesys.MakeFsOnDisk(), dir)
			pods := objs.pods()
			if len(pods) == 0 {
				t.Fatalf("no workload rendered; got %s", names(objs))
			}
			configMaps := map[string]object{}
			for _, cm := range objs.ofKind("ConfigMap") {
				configMaps[cm.Metadata.Name] = cm
			}
			found := false
			for id, pod := range pods {
				checkPodHardened(t, id, pod.Spec)
				c, _, ok := deltasyncContainer(pod.Spec)
				if !ok {
					continue
				}
				found = true
				if c.Image == "" || c.Image == "deltasync" || !strings.Contains(c.Image, ":") {
					t.Errorf("%s: image %q: want the kustomize images: transform to set name:tag", id, c.Image)
				}
				checkMounts(t, id, pod.Spec, c, configMaps, config)
			}
			if !found {
				t.Errorf("no deltasync container in %s", names(objs))
			}
			if sa := objs.ofKind("ServiceAccount"); len(sa) != 1 || sa[0].Metadata.Name != "deltasync" {
				t.Errorf("want ServiceAccount deltasync, got %s", names(sa))
			}
			for _, o := range objs {
				if o.Kind == "Secret" {
					t.Errorf("%s/%s: secrets are created out of band, never rendered from git", o.Kind, o.Metadata.Name)
				}
			}
		})
	}
}

// checkPodHardened: every container runs as non-root without privilege
// escalation, and deltasync's own container is fully locked down.
func checkPodHardened(t *testing.T, id string, p podSpec) {
	t.Helper()
	podNonRoot := p.SecurityContext != nil && p.SecurityContext.RunAsNonRoot != nil && *p.SecurityContext.RunAsNonRoot
	for _, c := range append(append([]container{}, p.InitContainers...), p.Containers...) {
		sc := c.SecurityContext
		nonRoot := podNonRoot
		if sc != nil && sc.RunAsNonRoot != nil {
			nonRoot = *sc.RunAsNonRoot
		}
		if !nonRoot {
			t.Errorf("%s: container %s: runAsNonRoot not set", id, c.Name)
		}
		for _, ctx := range []*securityCtx{p.SecurityContext, sc} {
			if ctx != nil && ctx.RunAsUser != nil && *ctx.RunAsUser == 0 {
				t.Errorf("%s: container %s: runAsUser 0", id, c.Name)
			}
		}
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: container %s: allowPrivilegeEscalation must be false", id, c.Name)
		}
		if c.Name != "deltasync" {
			continue
		}
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s: deltasync: readOnlyRootFilesystem must be true", id)
		}
		if sc == nil || sc.Capabilities == nil || !cmp.Equal(sc.Capabilities.Drop, []string{"ALL"}) || len(sc.Capabilities.Add) > 0 {
			t.Errorf("%s: deltasync: capabilities must drop ALL and add none", id)
		}
		if c.Resources.Requests["memory"] == "" || c.Resources.Limits["memory"] == "" || c.Resources.Requests["cpu"] == "" {
			t.Errorf("%s: deltasync: want cpu/memory requests and a memory limit, got %+v", id, c.Resources)
		}
	}
}

// checkMounts: the config comes from the generated ConfigMap (carrying
// base/config.yaml verbatim) and the token from the Secret, both read-only.
func checkMounts(t *testing.T, id string, p podSpec, c container, configMaps map[string]object, config string) {
	t.Helper()
	vols := map[string]volume{}
	for _, v := range p.Volumes {
		vols[v.Name] = v
	}
	var sawConfig, sawToken bool
	for _, m := range c.VolumeMounts {
		v, ok := vols[m.Name]
		if !ok {
			t.Errorf("%s: mount %s has no volume", id, m.Name)
			continue
		}
		switch {
		case v.ConfigMap != nil:
			sawConfig = true
			cm, ok := configMaps[v.ConfigMap.Name]
			if !ok {
				t.Errorf("%s: volume %s references ConfigMap %q, which is not rendered (name reference not rewritten?)", id, v.Name, v.ConfigMap.Name)
			} else if diff := cmp.Diff(config, cm.Data["config.yaml"]); diff != "" {
				t.Errorf("%s: ConfigMap %s config.yaml differs from base/config.yaml (-want +got):\n%s", id, cm.Metadata.Name, diff)
			}
			if m.MountPath != "/etc/deltasync" || !m.ReadOnly {
				t.Errorf("%s: config mounted at %s readOnly=%v, want /etc/deltasync read-only", id, m.MountPath, m.ReadOnly)
			}
		case v.Secret != nil:
			sawToken = true
			if v.Secret.SecretName != "deltasync-token" || m.MountPath != "/var/run/secrets/deltasync" || !m.ReadOnly {
				t.Errorf("%s: token: secret %q at %s readOnly=%v", id, v.Secret.SecretName, m.MountPath, m.ReadOnly)
			}
		}
	}
	if !sawConfig || !sawToken {
		t.Errorf("%s: config mounted=%v, token mounted=%v; want both", id, sawConfig, sawToken)
	}
	for _, want := range []string{"--config=/etc/deltasync/config.yaml", "--token-file=/var/run/secrets/deltasync/token"} {
		if !hasArg(c.Args, want) {
			t.Errorf("%s: args %q lack %s", id, c.Args, want)
		}
	}
}

func TestCronJob(t *testing.T) {
	checkCronJob(t, render(t, filesys.MakeFsOnDisk(), mustAbs(t, "kubernetes/overlays/cronjob")))
}

// checkCronJob: `once` on a schedule that never overlaps itself, a stuck
// run killed, and exit 2 failing the Job without retries.
func checkCronJob(t *testing.T, objs rendered) {
	t.Helper()
	cj := objs.one(t, "CronJob")
	s := cj.Spec
	if s.ConcurrencyPolicy != "Forbid" {
		t.Errorf("concurrencyPolicy = %q, want Forbid", s.ConcurrencyPolicy)
	}
	if s.StartingDeadlineSeconds == nil || *s.StartingDeadlineSeconds <= 0 {
		t.Errorf("startingDeadlineSeconds not set")
	}
	if s.Schedule == "" || s.JobTemplate == nil {
		t.Fatalf("schedule %q, jobTemplate %v", s.Schedule, s.JobTemplate)
	}
	js := s.JobTemplate.Spec
	if js.ActiveDeadlineSeconds == nil || *js.ActiveDeadlineSeconds <= 0 {
		t.Errorf("activeDeadlineSeconds not set")
	}
	if js.BackoffLimit == nil {
		t.Errorf("backoffLimit not set")
	}
	if js.Template.Spec.RestartPolicy != "Never" {
		t.Errorf("restartPolicy = %q, want Never", js.Template.Spec.RestartPolicy)
	}
	c, init, ok := deltasyncContainer(js.Template.Spec)
	if !ok || init {
		t.Fatalf("want a regular deltasync container")
	}
	if len(c.Args) == 0 || c.Args[0] != "once" {
		t.Errorf("args = %q, want `once` first", c.Args)
	}
	// Exit 2 (drift remains on watch-only tables) must fail the Job without
	// retries; exit 1 stays retryable.
	var failOn2 bool
	if pfp := js.PodFailurePolicy; pfp != nil {
		for _, r := range pfp.Rules {
			if r.Action == "FailJob" && r.OnExitCodes != nil && r.OnExitCodes.Operator == "In" &&
				cmp.Equal(r.OnExitCodes.Values, []int{2}) {
				failOn2 = true
			}
		}
	}
	if !failOn2 {
		t.Errorf("want podFailurePolicy FailJob on exit code 2")
	}
}

func TestSidecar(t *testing.T) {
	objs := render(t, filesys.MakeFsOnDisk(), mustAbs(t, "kubernetes/overlays/sidecar-example"))
	dep := objs.one(t, "Deployment")
	p := dep.Spec.Template.Spec
	c, init, ok := deltasyncContainer(p)
	if !ok || !init {
		t.Fatalf("deltasync must be an initContainer (native sidecar); init=%v found=%v", init, ok)
	}
	if c.RestartPolicy != "Always" {
		t.Errorf("sidecar restartPolicy = %q, want Always", c.RestartPolicy)
	}
	if len(p.Containers) != 1 || p.Containers[0].Name != "app" {
		t.Errorf("the app's containers must be left alone, got %d", len(p.Containers))
	}
	checkDaemonContainer(t, c)
	// The app's readiness includes the sidecar's: a long cycle (slow
	// catalog) must not fail it.
	if !slices.Contains(c.Args, "--max-cycle-duration=0s") {
		t.Errorf("sidecar args = %q, want --max-cycle-duration=0s", c.Args)
	}
}

// checkDaemonContainer: `run` with probes on /healthz and /readyz and a port
// named metrics on 9464.
func checkDaemonContainer(t *testing.T, c container) {
	t.Helper()
	if len(c.Args) == 0 || c.Args[0] != "run" {
		t.Errorf("args = %q, want `run` first", c.Args)
	}
	probes := []struct {
		name string
		p    *probe
		path string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}}
	for _, pr := range probes {
		if pr.p == nil || pr.p.HTTPGet == nil || pr.p.HTTPGet.Path != pr.path || fmt.Sprint(pr.p.HTTPGet.Port) != "metrics" {
			t.Errorf("%s probe: want httpGet %s on port metrics, got %+v", pr.name, pr.path, pr.p)
		}
	}
	if !cmp.Equal(c.Ports, []port{{Name: "metrics", ContainerPort: 9464}}) {
		t.Errorf("ports = %+v, want metrics:9464", c.Ports)
	}
}

func TestShardedStatefulSet(t *testing.T) {
	objs := render(t, filesys.MakeFsOnDisk(), mustAbs(t, "kubernetes/overlays/sharded"))
	checkSharded(t, objs, 3)
}

// TestShardCountFollowsReplicas renders a copy of the manifests with the
// overlay's replica count changed: --shard's N must follow it.
func TestShardCountFollowsReplicas(t *testing.T) {
	mem := filesys.MakeFsInMemory()
	root := "/deploy/kubernetes"
	err := filepath.WalkDir("kubernetes", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if filepath.ToSlash(path) == "kubernetes/overlays/sharded/kustomization.yaml" {
			s := strings.Replace(string(b), "    count: 3\n", "    count: 5\n", 1)
			if s == string(b) {
				return fmt.Errorf("%s: no `count: 3` to change", path)
			}
			b = []byte(s)
		}
		return mem.WriteFile(filepath.Join("/deploy", path), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	checkSharded(t, render(t, mem, root+"/overlays/sharded"), 5)
}

func checkSharded(t *testing.T, objs rendered, n int) {
	t.Helper()
	sts := objs.one(t, "StatefulSet")
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != n {
		t.Fatalf("replicas = %v, want %d", sts.Spec.Replicas, n)
	}
	c, init, ok := deltasyncContainer(sts.Spec.Template.Spec)
	if !ok || init {
		t.Fatalf("want a regular deltasync container")
	}
	checkDaemonContainer(t, c)
	idx, ok := envValue(c, "POD_INDEX")
	if !ok || idx.ValueFrom == nil || idx.ValueFrom.FieldRef == nil ||
		idx.ValueFrom.FieldRef.FieldPath != "metadata.labels['apps.kubernetes.io/pod-index']" {
		t.Errorf("POD_INDEX must come from the pod-index label via the downward API, got %+v", idx)
	}
	// Each replica's args, as the kubelet expands $(VAR) references; each
	// must parse as that replica's shard.
	for ordinal := 0; ordinal < n; ordinal++ {
		env := map[string]string{"POD_INDEX": fmt.Sprint(ordinal)}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				env[e.Name] = expand(e.Value, env)
			}
		}
		var shard string
		for _, a := range c.Args {
			if v, ok := strings.CutPrefix(expand(a, env), "--shard="); ok {
				shard = v
			}
		}
		if want := fmt.Sprintf("%d/%d", ordinal, n); shard != want {
			t.Errorf("replica %d: --shard=%q, want %s", ordinal, shard, want)
		}
	}
	// Headless governing Service with the metrics port, and a PDB, both
	// selecting the pods.
	podLabels := sts.Spec.Template.Metadata.Labels
	svc := objs.one(t, "Service")
	if svc.Metadata.Name != sts.Spec.ServiceName || svc.Spec.ClusterIP != "None" {
		t.Errorf("Service %s clusterIP %q: want headless governing service %q", svc.Metadata.Name, svc.Spec.ClusterIP, sts.Spec.ServiceName)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" || svc.Spec.Ports[0].Port != 9464 {
		t.Errorf("Service ports = %+v, want metrics:9464", svc.Spec.Ports)
	}
	pdb := objs.one(t, "PodDisruptionBudget")
	for what, sel := range map[string]map[string]string{
		"StatefulSet": sts.Spec.Selector.MatchLabels, "Service": svc.Spec.Selector.Plain, "PodDisruptionBudget": pdb.Spec.Selector.MatchLabels,
	} {
		if len(sel) == 0 {
			t.Errorf("%s: empty selector", what)
		}
		for k, v := range sel {
			if podLabels[k] != v {
				t.Errorf("%s selector %s=%s does not match pod labels %v", what, k, v, podLabels)
			}
		}
	}
}

// expand does the kubelet's $(VAR) expansion for the variables in env.
func expand(s string, env map[string]string) string {
	for k, v := range env {
		s = strings.ReplaceAll(s, "$("+k+")", v)
	}
	return s
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.FromSlash(p))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestEventsOverlay: one daemon (a shared SQS queue must not be split
// between shards), subscribed by env, with the cron cycle kept hourly.
func TestEventsOverlay(t *testing.T) {
	objs := render(t, filesys.MakeFsOnDisk(), mustAbs(t, "kubernetes/overlays/events-sqs"))
	sts := objs.ofKind("StatefulSet")
	if len(sts) != 1 || sts[0].Spec.Replicas == nil || *sts[0].Spec.Replicas != 1 {
		t.Fatalf("want one StatefulSet with 1 replica, got %s", names(objs))
	}
	c, _, ok := deltasyncContainer(sts[0].Spec.Template.Spec)
	if !ok {
		t.Fatal("no deltasync container")
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if !strings.HasPrefix(env["DELTASYNC_EVENTS_URL"], "awssqs://") || env["DELTASYNC_SCHEDULE"] != "@hourly" ||
		env["SHARD"] != "$(POD_INDEX)/1" {
		t.Errorf("env %v: want DELTASYNC_EVENTS_URL awssqs://…, DELTASYNC_SCHEDULE @hourly, SHARD $(POD_INDEX)/1", env)
	}
	if sa := objs.ofKind("ServiceAccount"); len(sa) != 1 || sa[0].Metadata.Annotations["eks.amazonaws.com/role-arn"] == "" {
		t.Errorf("ServiceAccount without an IRSA role: %+v", sa)
	}
}
