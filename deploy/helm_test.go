package deploy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/yaml"

	"github.com/deltasync/deltasync/internal/testenv"
)

// The Helm chart (helm/deltasync) is rendered here by the real Helm engine:
// the helm binary that .ci/setup-helm.sh builds from the Go module proxy
// (DELTASYNC_HELM). Every values combination the chart documents (its
// defaults and each helm/deltasync/ci/*-values.yaml) is rendered, linted,
// decoded into the Kubernetes types of k8s_types_test.go and checked like
// the kustomize overlays, and its config goes through `deltasync
// check-config`. The chart's defaults are compared with the kustomize
// manifests field by field, so the two routes cannot drift apart.

const (
	chartDir = "helm/deltasync"
	// kubeVersion is the cluster version the chart is rendered for (the
	// chart needs >= 1.28; helm template defaults to an older one).
	kubeVersion = "1.31.0"
	// release is the release name the tests install as: the one that makes
	// the chart's object names equal the kustomize manifests' ("deltasync").
	release = "deltasync"
)

func helmBinary(t *testing.T) string {
	t.Helper()
	return testenv.Getenv(t, "DELTASYNC_HELM", testenv.External, "DELTASYNC_HELM unset (.ci/setup-helm.sh start)")
}

// valuesCase is one documented values combination: a ci/*-values.yaml file
// (or none: the defaults) and extra --set flags.
type valuesCase struct {
	name string
	file string
	sets []string
}

// documentedCases: the defaults and every ci/*-values.yaml, so a file added
// later is rendered too.
func documentedCases(t *testing.T) []valuesCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no %s/ci/*-values.yaml: %v", chartDir, err)
	}
	cases := []valuesCase{{name: "defaults"}}
	for _, f := range files {
		cases = append(cases, valuesCase{name: strings.TrimSuffix(filepath.Base(f), "-values.yaml"), file: f})
	}
	return cases
}

// helmTemplate renders the chart; the error carries helm's message.
func helmTemplate(t *testing.T, bin string, vc valuesCase) ([]byte, error) {
	t.Helper()
	args := []string{"template", release, chartDir, "--namespace", "lake", "--kube-version", kubeVersion}
	if vc.file != "" {
		args = append(args, "-f", vc.file)
	}
	for _, s := range vc.sets {
		args = append(args, "--set", s)
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("helm %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// helmObjects splits a rendered chart into its manifests, each decoded
// into the test's Kubernetes types and as a plain map.
func helmObjects(t *testing.T, out []byte) (rendered, []map[string]any) {
	t.Helper()
	nodes, err := kio.FromBytes(out)
	if err != nil {
		t.Fatalf("helm output is not YAML: %v\n%s", err, out)
	}
	var objs rendered
	var raw []map[string]any
	for _, n := range nodes {
		s, err := n.String()
		if err != nil {
			t.Fatal(err)
		}
		var o object
		if err := yaml.Unmarshal([]byte(s), &o); err != nil {
			t.Fatalf("decode %s: %v\n%s", n.GetKind(), err, s)
		}
		if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
			t.Errorf("manifest without apiVersion, kind or name:\n%s", s)
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
		raw = append(raw, m)
	}
	return objs, raw
}

// caseValues reads what a case sets, over the chart's defaults (a shallow
// view: enough for workload, replicas, token and the monitoring switches).
func caseValues(t *testing.T, vc valuesCase) map[string]any {
	t.Helper()
	var v map[string]any
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(chartDir, "values.yaml"))), &v); err != nil {
		t.Fatal(err)
	}
	if vc.file != "" {
		var over map[string]any
		if err := yaml.Unmarshal([]byte(readFile(t, vc.file)), &over); err != nil {
			t.Fatalf("%s: %v", vc.file, err)
		}
		for k, x := range over {
			if sub, ok := x.(map[string]any); ok {
				if base, ok := v[k].(map[string]any); ok {
					for sk, sx := range sub {
						base[sk] = sx
					}
					continue
				}
			}
			v[k] = x
		}
	}
	return v
}

func TestHelmChartRenders(t *testing.T) {
	bin := helmBinary(t)
	var deltasyncBin, token string
	if !testing.Short() {
		deltasyncBin = buildDeltasync(t)
		token = filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(token, []byte("not-a-real-token\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, vc := range documentedCases(t) {
		t.Run(vc.name, func(t *testing.T) {
			out, err := helmTemplate(t, bin, vc)
			if err != nil {
				t.Fatal(err)
			}
			objs, _ := helmObjects(t, out)
			values := caseValues(t, vc)
			workload := values["workload"].(string)
			replicas := int(values["replicas"].(float64))

			configMaps := map[string]object{}
			for _, cm := range objs.ofKind("ConfigMap") {
				configMaps[cm.Metadata.Name] = cm
			}
			if len(configMaps) != 1 {
				t.Fatalf("want one ConfigMap, got %s", names(objs.ofKind("ConfigMap")))
			}
			pods := objs.pods()
			if len(pods) != 1 {
				t.Fatalf("want one workload, got %s", names(objs))
			}
			tokenSecret := values["token"].(map[string]any)["existingSecret"].(string)
			for id, pod := range pods {
				checkPodHardened(t, id, pod.Spec)
				c, init, ok := deltasyncContainer(pod.Spec)
				if !ok || init {
					t.Fatalf("%s: want a regular deltasync container", id)
				}
				checkHelmMounts(t, id, pod.Spec, c, configMaps, tokenSecret)
				if pod.Metadata.Annotations["checksum/config"] == "" {
					t.Errorf("%s: no checksum/config annotation: a config change would not roll the pods", id)
				}
				if pod.Spec.ServiceAccountName == "" {
					t.Errorf("%s: no serviceAccountName", id)
				}
			}
			switch workload {
			case "deployment":
				dep := objs.one(t, "Deployment")
				if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 1 {
					t.Errorf("Deployment replicas %v, want 1", dep.Spec.Replicas)
				}
				c, _, _ := deltasyncContainer(dep.Spec.Template.Spec)
				checkDaemonContainer(t, c)
				if slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--shard") }) {
					t.Errorf("Deployment args %q: one daemon takes no --shard", c.Args)
				}
			case "statefulset":
				checkSharded(t, objs, replicas)
			case "cronjob":
				checkCronJob(t, objs)
				if len(objs.ofKind("Service")) > 0 || len(objs.ofKind("PodMonitor")) > 0 {
					t.Errorf("cronjob: no /metrics to serve or scrape, got %s", names(objs))
				}
			default:
				t.Fatalf("workload %q", workload)
			}
			sa := objs.ofKind("ServiceAccount")
			if create := values["serviceAccount"].(map[string]any)["create"].(bool); create != (len(sa) == 1) {
				t.Errorf("serviceAccount.create=%v, rendered %s", create, names(sa))
			}
			for _, pod := range pods {
				for _, s := range sa {
					if s.Metadata.Name != pod.Spec.ServiceAccountName {
						t.Errorf("ServiceAccount %s is not the pods' %q", s.Metadata.Name, pod.Spec.ServiceAccountName)
					}
				}
			}
			for _, o := range objs {
				if o.Kind == "Secret" {
					t.Errorf("%s/%s: the token Secret must be an existing one, never rendered", o.Kind, o.Metadata.Name)
				}
				if o.Metadata.Labels["app.kubernetes.io/name"] != "deltasync" {
					t.Errorf("%s/%s: app.kubernetes.io/name %q, want deltasync (the scrape job the alerts expect)",
						o.Kind, o.Metadata.Name, o.Metadata.Labels["app.kubernetes.io/name"])
				}
			}
			checkHelmMonitoring(t, objs, out, values)

			if deltasyncBin != "" {
				for _, cm := range configMaps {
					checkRenderedConfig(t, deltasyncBin, token, cm.Data["config.yaml"])
				}
			}
		})
	}
}

// checkHelmMounts: the config from the chart's ConfigMap and the token from
// the existing Secret (as the file "token"), both read-only.
func checkHelmMounts(t *testing.T, id string, p podSpec, c container, configMaps map[string]object, secret string) {
	t.Helper()
	vols := map[string]volume{}
	for _, v := range p.Volumes {
		vols[v.Name] = v
	}
	mounts := map[string]volumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m
		if _, ok := vols[m.Name]; !ok {
			t.Errorf("%s: mount %s has no volume", id, m.Name)
		}
	}
	cfg, tok := mounts["/etc/deltasync"], mounts["/var/run/secrets/deltasync"]
	if v := vols[cfg.Name]; v.ConfigMap == nil || !cfg.ReadOnly {
		t.Errorf("%s: /etc/deltasync: want a read-only ConfigMap volume, got %+v %+v", id, cfg, v)
	} else if _, ok := configMaps[v.ConfigMap.Name]; !ok {
		t.Errorf("%s: ConfigMap %q is not rendered", id, v.ConfigMap.Name)
	}
	if v := vols[tok.Name]; v.Secret == nil || v.Secret.SecretName != secret || !tok.ReadOnly {
		t.Errorf("%s: token: want Secret %s mounted read-only, got %+v %+v", id, secret, tok, v)
	}
	for _, want := range []string{"--config=/etc/deltasync/config.yaml", "--token-file=/var/run/secrets/deltasync/token"} {
		if !hasArg(c.Args, want) {
			t.Errorf("%s: args %q lack %s", id, c.Args, want)
		}
	}
}

// checkHelmMonitoring: PodMonitor and PrometheusRule when switched on; the
// rule groups are deploy/monitoring/alerts.yaml's.
func checkHelmMonitoring(t *testing.T, objs rendered, out []byte, values map[string]any) {
	t.Helper()
	on := func(k string) bool { return values[k].(map[string]any)["enabled"].(bool) }
	if pm := objs.ofKind("PodMonitor"); on("podMonitor") != (len(pm) == 1) {
		t.Errorf("podMonitor.enabled=%v, rendered %s", on("podMonitor"), names(pm))
	}
	_, raw := helmObjects(t, out)
	var rules []map[string]any
	for _, m := range raw {
		if m["kind"] == "PrometheusRule" {
			rules = append(rules, m)
		}
		if m["kind"] == "PodMonitor" {
			spec := m["spec"].(map[string]any)
			if spec["jobLabel"] != "app.kubernetes.io/name" {
				t.Errorf("PodMonitor jobLabel %v, want app.kubernetes.io/name (job=\"deltasync\")", spec["jobLabel"])
			}
		}
	}
	if on("prometheusRule") != (len(rules) == 1) {
		t.Fatalf("prometheusRule.enabled=%v, rendered %d PrometheusRules", on("prometheusRule"), len(rules))
	}
	if len(rules) == 1 {
		var want map[string]any
		if err := yaml.Unmarshal([]byte(readFile(t, alertsPath)), &want); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, rules[0]["spec"]); diff != "" {
			t.Errorf("PrometheusRule spec differs from %s (-want +got):\n%s", alertsPath, diff)
		}
	}
}

// buildDeltasync builds the binary check-config runs from (light tags, as
// TestConfigChecks).
func buildDeltasync(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "deltasync")
	cmd := exec.Command("go", "build", "-tags", lightTags, "-o", bin, "../cmd/deltasync")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// checkRenderedConfig runs `deltasync check-config` on the config the chart
// rendered into its ConfigMap.
func checkRenderedConfig(t *testing.T, bin, token, config string) {
	t.Helper()
	if strings.TrimSpace(config) == "" {
		t.Fatal("the ConfigMap has no config.yaml")
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "check-config", "--config", path, "--token-file", token)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DELTASYNC_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("deltasync check-config on the rendered config: %v\n%s\n%s", err, out, config)
	}
}

// TestHelmLint: `helm lint --strict` passes with no warning for every
// documented combination.
func TestHelmLint(t *testing.T) {
	bin := helmBinary(t)
	for _, vc := range documentedCases(t) {
		args := []string{"lint", "--strict", "--kube-version", kubeVersion, chartDir}
		if vc.file != "" {
			args = append(args, "-f", vc.file)
		}
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil || bytes.Contains(out, []byte("[WARNING]")) || bytes.Contains(out, []byte("[ERROR]")) {
			t.Errorf("%s: helm %s: %v\n%s", vc.name, strings.Join(args, " "), err, out)
		}
	}
}

// TestHelmRefusesBadValues: values that cannot work fail the render with a
// message naming the value, instead of deploying something else.
func TestHelmRefusesBadValues(t *testing.T) {
	bin := helmBinary(t)
	for _, tc := range []struct {
		sets []string
		want string
	}{
		{[]string{"replicas=2"}, "replicas 2 with workload deployment: two daemons would reconcile the same tables; use workload: statefulset"},
		{[]string{"workload=cronjob", "replicas=3"}, "replicas 3 with workload cronjob"},
		{[]string{"workload=daemonset"}, `workload "daemonset": want deployment, statefulset or cronjob`},
		{[]string{"workload=statefulset", "replicas=0"}, "replicas 0: want a whole number >= 1"},
		{[]string{"workload=statefulset", "replicas=2.5"}, "replicas 2.5: want a whole number >= 1"},
		{[]string{"workload=cronjob", "podMonitor.enabled=true"}, "podMonitor.enabled with workload cronjob"},
		{[]string{"token.existingSecret="}, "token.existingSecret: name the Secret"},
		{[]string{"serviceAccount.create=false"}, "serviceAccount.name: name the existing ServiceAccount"},
		{[]string{"config.shard=0/3"}, "config.shard: the chart sets --shard from replicas"},
	} {
		_, err := helmTemplate(t, bin, valuesCase{sets: tc.sets})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: %v, want an error with %q", strings.Join(tc.sets, ","), err, tc.want)
		}
	}
}

// TestHelmAlertsAreMonitorings: the chart's copy of the alert rules (a
// chart cannot read outside its directory, and helm package does not
// follow symlinks out of it) is byte-identical to deploy/monitoring's, the
// one source; copy it over after changing the rules.
func TestHelmAlertsAreMonitorings(t *testing.T) {
	if got, want := readFile(t, filepath.Join(chartDir, "files", "alerts.yaml")), readFile(t, alertsPath); got != want {
		t.Errorf("%s/files/alerts.yaml differs from %s: cp deploy/monitoring/alerts.yaml deploy/helm/deltasync/files/", chartDir, alertsPath)
	}
}

// TestHelmDefaultsMatchKustomize: the chart's defaults are the kustomize
// manifests': the sharded StatefulSet, the CronJob and (for the Deployment,
// which kustomize has no overlay for) the StatefulSet's container without
// the shard. Image, args, env, ports, probes, resources, security
// contexts, volumes and the workload settings are compared whole, and the
// default config equals base/config.yaml.
func TestHelmDefaultsMatchKustomize(t *testing.T) {
	bin := helmBinary(t)
	helmWorkload := func(sets ...string) map[string]any {
		t.Helper()
		out, err := helmTemplate(t, bin, valuesCase{sets: sets})
		if err != nil {
			t.Fatal(err)
		}
		_, raw := helmObjects(t, out)
		for _, m := range raw {
			switch m["kind"] {
			case "Deployment", "StatefulSet", "CronJob":
				return m
			}
		}
		t.Fatalf("no workload rendered with %q", sets)
		return nil
	}
	kustomizeWorkload := func(overlay, kind string) map[string]any {
		t.Helper()
		m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), mustAbs(t, overlay))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range m.Resources() {
			if r.GetKind() == kind {
				b, err := r.AsYAML()
				if err != nil {
					t.Fatal(err)
				}
				var out map[string]any
				if err := yaml.Unmarshal(b, &out); err != nil {
					t.Fatal(err)
				}
				return out
			}
		}
		t.Fatalf("%s renders no %s", overlay, kind)
		return nil
	}

	t.Run("statefulset", func(t *testing.T) {
		want := kustomizeWorkload("kubernetes/overlays/sharded", "StatefulSet")
		got := helmWorkload("workload=statefulset", "replicas=3")
		compareWorkloads(t, want, got, "spec")
	})
	t.Run("cronjob", func(t *testing.T) {
		want := kustomizeWorkload("kubernetes/overlays/cronjob", "CronJob")
		got := helmWorkload("workload=cronjob")
		compareWorkloads(t, want, got, "spec", "jobTemplate", "spec")
		if diff := cmp.Diff(without(dig(t, want, "spec"), "jobTemplate"), without(dig(t, got, "spec"), "jobTemplate")); diff != "" {
			t.Errorf("CronJob spec differs (-kustomize +helm):\n%s", diff)
		}
	})
	t.Run("deployment", func(t *testing.T) {
		sts := kustomizeWorkload("kubernetes/overlays/sharded", "StatefulSet")
		dep := helmWorkload()
		want, got := podSpecAt(t, sts, "spec"), podSpecAt(t, dep, "spec")
		// One daemon: the StatefulSet's container less the shard.
		c := want["containers"].([]any)[0].(map[string]any)
		delete(c, "env")
		c["args"] = slices.DeleteFunc(c["args"].([]any), func(a any) bool { return strings.HasPrefix(a.(string), "--shard") })
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Deployment pod spec differs from the kustomize StatefulSet's (less --shard) (-kustomize +helm):\n%s", diff)
		}
	})
	t.Run("config", func(t *testing.T) {
		var values struct {
			Config map[string]any `json:"config"`
		}
		if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(chartDir, "values.yaml"))), &values); err != nil {
			t.Fatal(err)
		}
		var base map[string]any
		if err := yaml.Unmarshal([]byte(readFile(t, baseConfigPath)), &base); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(base, values.Config); diff != "" {
			t.Errorf("values.yaml config differs from %s (-kustomize +helm):\n%s", baseConfigPath, diff)
		}
	})
}

// compareWorkloads compares the workload specs (less selector and pod
// template metadata, whose labels name the Helm release) and the pod specs.
func compareWorkloads(t *testing.T, want, got map[string]any, path ...string) {
	t.Helper()
	ws, gs := dig(t, want, path...), dig(t, got, path...)
	if diff := cmp.Diff(podSpecAt(t, want, path...), podSpecAt(t, got, path...)); diff != "" {
		t.Errorf("pod spec differs (-kustomize +helm):\n%s", diff)
	}
	if diff := cmp.Diff(without(ws, "selector", "template"), without(gs, "selector", "template")); diff != "" {
		t.Errorf("%s differs (-kustomize +helm):\n%s", strings.Join(path, "."), diff)
	}
}

// without returns m less the keys.
func without(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if !slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return out
}

// podSpecAt returns the pod spec under path.template.spec, normalised: the
// ConfigMap's name loses kustomize's hash suffix, and the container's
// imagePullPolicy (the chart sets one; kustomize leaves the default) goes.
func podSpecAt(t *testing.T, m map[string]any, path ...string) map[string]any {
	t.Helper()
	ps := dig(t, m, append(append([]string{}, path...), "template", "spec")...)
	b, _ := yaml.Marshal(ps)
	var out map[string]any
	if err := yaml.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	for _, v := range out["volumes"].([]any) {
		if cm, ok := v.(map[string]any)["configMap"].(map[string]any); ok {
			if name := cm["name"].(string); strings.HasPrefix(name, "deltasync-config-") {
				cm["name"] = "deltasync-config"
			}
		}
	}
	for _, c := range out["containers"].([]any) {
		delete(c.(map[string]any), "imagePullPolicy")
	}
	return out
}

func dig(t *testing.T, m map[string]any, path ...string) map[string]any {
	t.Helper()
	cur := m
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			t.Fatalf("no %s in %s", p, strings.Join(path, "."))
		}
		cur = next
	}
	return cur
}
