package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// The few Kubernetes fields the tests look at. Hand-written rather than
// k8s.io/api, which would pull in apimachinery for a handful of fields.

type object struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metadata          `json:"metadata"`
	Spec       spec              `json:"spec"`
	Data       map[string]string `json:"data"`
}

type metadata struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// spec is the union of the specs the tests read (workloads, CronJob,
// Service, PodDisruptionBudget).
type spec struct {
	Replicas *int     `json:"replicas"`
	Selector selector `json:"selector"`
	Template podTmpl  `json:"template"`
	// StatefulSet
	ServiceName string `json:"serviceName"`
	// CronJob
	Schedule                string  `json:"schedule"`
	ConcurrencyPolicy       string  `json:"concurrencyPolicy"`
	StartingDeadlineSeconds *int    `json:"startingDeadlineSeconds"`
	JobTemplate             *jobTpl `json:"jobTemplate"`
	// Service
	ClusterIP string        `json:"clusterIP"`
	Ports     []servicePort `json:"ports"`
	// PodDisruptionBudget
	MaxUnavailable any `json:"maxUnavailable"`
}

// selector reads both a workload's {matchLabels: ...} and a Service's plain map.
type selector struct {
	MatchLabels map[string]string `json:"matchLabels"`
	Plain       map[string]string `json:"-"`
}

func (s *selector) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return err
	}
	if ml, ok := m["matchLabels"].(map[string]any); ok {
		s.MatchLabels = map[string]string{}
		for k, v := range ml {
			s.MatchLabels[k] = fmt.Sprint(v)
		}
		return nil
	}
	s.Plain = map[string]string{}
	for k, v := range m {
		s.Plain[k] = fmt.Sprint(v)
	}
	return nil
}

type jobTpl struct {
	Spec struct {
		BackoffLimit          *int    `json:"backoffLimit"`
		ActiveDeadlineSeconds *int    `json:"activeDeadlineSeconds"`
		Template              podTmpl `json:"template"`
		PodFailurePolicy      *struct {
			Rules []struct {
				Action      string `json:"action"`
				OnExitCodes *struct {
					ContainerName string `json:"containerName"`
					Operator      string `json:"operator"`
					Values        []int  `json:"values"`
				} `json:"onExitCodes"`
			} `json:"rules"`
		} `json:"podFailurePolicy"`
	} `json:"spec"`
}

type podTmpl struct {
	Metadata metadata `json:"metadata"`
	Spec     podSpec  `json:"spec"`
}

type podSpec struct {
	ServiceAccountName string       `json:"serviceAccountName"`
	RestartPolicy      string       `json:"restartPolicy"`
	SecurityContext    *securityCtx `json:"securityContext"`
	InitContainers     []container  `json:"initContainers"`
	Containers         []container  `json:"containers"`
	Volumes            []volume     `json:"volumes"`
}

type securityCtx struct {
	RunAsNonRoot             *bool `json:"runAsNonRoot"`
	RunAsUser                *int  `json:"runAsUser"`
	AllowPrivilegeEscalation *bool `json:"allowPrivilegeEscalation"`
	ReadOnlyRootFilesystem   *bool `json:"readOnlyRootFilesystem"`
	Capabilities             *struct {
		Drop []string `json:"drop"`
		Add  []string `json:"add"`
	} `json:"capabilities"`
}

type container struct {
	Name            string        `json:"name"`
	Image           string        `json:"image"`
	Args            []string      `json:"args"`
	RestartPolicy   string        `json:"restartPolicy"`
	Env             []envVar      `json:"env"`
	Ports           []port        `json:"ports"`
	LivenessProbe   *probe        `json:"livenessProbe"`
	ReadinessProbe  *probe        `json:"readinessProbe"`
	SecurityContext *securityCtx  `json:"securityContext"`
	Resources       resources     `json:"resources"`
	VolumeMounts    []volumeMount `json:"volumeMounts"`
}

type envVar struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	ValueFrom *struct {
		FieldRef *struct {
			FieldPath string `json:"fieldPath"`
		} `json:"fieldRef"`
	} `json:"valueFrom"`
}

type port struct {
	Name          string `json:"name"`
	ContainerPort int    `json:"containerPort"`
}

type servicePort struct {
	Name       string `json:"name"`
	Port       int    `json:"port"`
	TargetPort any    `json:"targetPort"`
}

type probe struct {
	HTTPGet *struct {
		Path string `json:"path"`
		Port any    `json:"port"`
	} `json:"httpGet"`
}

type resources struct {
	Requests map[string]string `json:"requests"`
	Limits   map[string]string `json:"limits"`
}

type volumeMount struct {
	Name      string `json:"name"`
	MountPath string `json:"mountPath"`
	ReadOnly  bool   `json:"readOnly"`
}

type volume struct {
	Name      string `json:"name"`
	ConfigMap *struct {
		Name string `json:"name"`
	} `json:"configMap"`
	Secret *struct {
		SecretName string `json:"secretName"`
	} `json:"secret"`
	EmptyDir any `json:"emptyDir"`
}

// rendered is the output of one kustomization.
type rendered []object

// render builds the kustomization in dir (on fs) the way `kubectl apply -k` does.
func render(t *testing.T, fs filesys.FileSystem, dir string) rendered {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(fs, dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out rendered
	for _, r := range m.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			t.Fatalf("%s: %s as YAML: %v", dir, r.CurId(), err)
		}
		var o object
		if err := yaml.Unmarshal(b, &o); err != nil {
			t.Fatalf("%s: decode %s: %v\n%s", dir, r.CurId(), err, b)
		}
		out = append(out, o)
	}
	return out
}

// overlayDirs lists deploy/kubernetes/overlays/*: every overlay is rendered,
// including ones added later.
func overlayDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("kubernetes", "overlays", "*", "kustomization.yaml"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no overlays found: %v", err)
	}
	for i := range dirs {
		abs, err := filepath.Abs(filepath.Dir(dirs[i]))
		if err != nil {
			t.Fatal(err)
		}
		dirs[i] = abs
	}
	sort.Strings(dirs)
	return dirs
}

func (r rendered) ofKind(kind string) []object {
	var out []object
	for _, o := range r {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

func (r rendered) one(t *testing.T, kind string) object {
	t.Helper()
	os := r.ofKind(kind)
	if len(os) != 1 {
		t.Fatalf("want exactly one %s, got %d", kind, len(os))
	}
	return os[0]
}

// pods returns the pod template of every workload, by "Kind/name".
func (r rendered) pods() map[string]podTmpl {
	out := map[string]podTmpl{}
	for _, o := range r {
		switch o.Kind {
		case "Deployment", "StatefulSet", "DaemonSet", "Job", "ReplicaSet":
			out[o.Kind+"/"+o.Metadata.Name] = o.Spec.Template
		case "CronJob":
			if o.Spec.JobTemplate != nil {
				out[o.Kind+"/"+o.Metadata.Name] = o.Spec.JobTemplate.Spec.Template
			}
		}
	}
	return out
}

// deltasyncContainer finds the deltasync container (init or regular) of a pod.
func deltasyncContainer(p podSpec) (c container, init bool, ok bool) {
	for _, c := range p.InitContainers {
		if c.Name == "deltasync" {
			return c, true, true
		}
	}
	for _, c := range p.Containers {
		if c.Name == "deltasync" {
			return c, false, true
		}
	}
	return container{}, false, false
}

func hasArg(args []string, want string) bool { return slices.Contains(args, want) }

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func envValue(c container, name string) (envVar, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e, true
		}
	}
	return envVar{}, false
}

func names(objs []object) string {
	var s []string
	for _, o := range objs {
		s = append(s, o.Kind+"/"+o.Metadata.Name)
	}
	return strings.Join(s, ", ")
}
