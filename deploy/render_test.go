package deploy

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

var overlays = []string{"k8s/overlays/dev", "k8s/overlays/prod"}

// services are purser's four Deployments, by NATS user.
var services = []string{"ingress", "orchestrator", "toolrunner", "notifier"}

// rendered is one overlay's objects, decoded.
type rendered struct {
	objects []runtime.Object
}

func render(t *testing.T, dir string) rendered {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, policyv1.AddToScheme,
		autoscalingv2.AddToScheme, networkingv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	// Strict: an unknown or duplicated field is an error, as it is for
	// `kubectl apply --validate=strict`.
	codec := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Yaml: true, Strict: true})
	var r rendered
	for _, res := range resMap.Resources() {
		y, err := res.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		obj, gvk, err := codec.Decode(y, nil, nil)
		if err != nil {
			t.Fatalf("%s: %s %s does not decode strictly: %v", dir, res.GetKind(), res.GetName(), err)
		}
		if gvk.Kind != res.GetKind() {
			t.Fatalf("%s: decoded %s as %s", dir, res.GetKind(), gvk.Kind)
		}
		r.objects = append(r.objects, obj)
	}
	return r
}

func each[T runtime.Object](r rendered) []T {
	var out []T
	for _, o := range r.objects {
		if v, ok := o.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

func TestOverlaysRenderStrictly(t *testing.T) {
	for _, dir := range overlays {
		t.Run(dir, func(t *testing.T) {
			r := render(t, dir)
			if len(r.objects) < 30 {
				t.Fatalf("%d objects; the overlay lost most of the base", len(r.objects))
			}
			for _, s := range each[*corev1.Secret](r) {
				t.Errorf("Secret %s is in the manifests: it would overwrite the one `kubectl create secret` made", s.Name)
			}
			for _, ns := range each[*corev1.Namespace](r) {
				if ns.Name != "purser" {
					t.Errorf("namespace %s", ns.Name)
				}
			}
		})
	}
}

var imageTag = regexp.MustCompile(`^[^:@]+(:[\w][\w.-]*)?(@sha256:[0-9a-f]{64})?$`)

func pinned(image string) bool {
	m := imageTag.FindStringSubmatch(image)
	return m != nil && (m[2] != "" || (m[1] != "" && m[1] != ":latest"))
}

func podSpecs(r rendered) map[string]corev1.PodSpec {
	out := map[string]corev1.PodSpec{}
	for _, d := range each[*appsv1.Deployment](r) {
		out["Deployment/"+d.Name] = d.Spec.Template.Spec
	}
	for _, s := range each[*appsv1.StatefulSet](r) {
		out["StatefulSet/"+s.Name] = s.Spec.Template.Spec
	}
	for _, j := range each[*batchv1.Job](r) {
		out["Job/"+j.Name] = j.Spec.Template.Spec
	}
	return out
}

func TestEveryPodIsPinnedLimitedAndTokenless(t *testing.T) {
	for _, dir := range overlays {
		t.Run(dir, func(t *testing.T) {
			r := render(t, dir)
			accounts := map[string]bool{}
			for _, sa := range each[*corev1.ServiceAccount](r) {
				if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
					t.Errorf("ServiceAccount %s mounts a token", sa.Name)
				}
				accounts[sa.Name] = true
			}
			for name, spec := range podSpecs(r) {
				if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
					t.Errorf("%s mounts a service account token", name)
				}
				if !accounts[spec.ServiceAccountName] {
					t.Errorf("%s runs as ServiceAccount %q, which the manifests do not make", name, spec.ServiceAccountName)
				}
				if spec.SecurityContext == nil || spec.SecurityContext.RunAsNonRoot == nil || !*spec.SecurityContext.RunAsNonRoot {
					t.Errorf("%s may run as root", name)
				}
				for _, c := range spec.Containers {
					if !pinned(c.Image) {
						t.Errorf("%s: image %q is not pinned to a tag or digest", name, c.Image)
					}
					if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
						t.Errorf("%s: container %s lacks CPU and memory requests or a memory limit", name, c.Name)
					}
					if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
						t.Errorf("%s: container %s has a writable root filesystem", name, c.Name)
					}
					if !strings.HasPrefix(name, "Job/") && (c.ReadinessProbe == nil || c.LivenessProbe == nil) {
						t.Errorf("%s: container %s lacks a readiness or liveness probe", name, c.Name)
					}
				}
			}
		})
	}
}

func TestServicesAreSpreadBudgetedAndScaled(t *testing.T) {
	for _, dir := range overlays {
		t.Run(dir, func(t *testing.T) {
			r := render(t, dir)
			pdbs := map[string]bool{}
			for _, p := range each[*policyv1.PodDisruptionBudget](r) {
				pdbs[p.Spec.Selector.MatchLabels["app.kubernetes.io/name"]] = true
			}
			hpas := map[string]*autoscalingv2.HorizontalPodAutoscaler{}
			for _, h := range each[*autoscalingv2.HorizontalPodAutoscaler](r) {
				hpas[h.Spec.ScaleTargetRef.Name] = h
			}
			deployments := map[string]*appsv1.Deployment{}
			for _, d := range each[*appsv1.Deployment](r) {
				deployments[d.Name] = d
			}
			for _, svc := range services {
				name := "purser-" + svc
				d := deployments[name]
				if d == nil {
					t.Fatalf("no Deployment %s", name)
				}
				if !pdbs[name] {
					t.Errorf("%s has no PodDisruptionBudget", name)
				}
				if h := hpas[name]; h == nil || h.Spec.MinReplicas == nil || *h.Spec.MinReplicas > h.Spec.MaxReplicas {
					t.Errorf("%s has no sound autoscaler", name)
				}
				spec := d.Spec.Template.Spec
				if len(spec.TopologySpreadConstraints) == 0 {
					t.Errorf("%s is not spread", name)
				}
				if got := spec.Containers[0].Args; !slices.Equal(got, []string{svc}) {
					t.Errorf("%s runs %v", name, got)
				}
				env := map[string]corev1.EnvVar{}
				for _, e := range spec.Containers[0].Env {
					env[e.Name] = e
				}
				if env["NATS_USER"].Value != svc {
					t.Errorf("%s logs in to NATS as %q, want %q", name, env["NATS_USER"].Value, svc)
				}
				if ref := env["NATS_PASSWORD"].ValueFrom; ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != "purser-nats" || ref.SecretKeyRef.Key != svc {
					t.Errorf("%s takes its NATS password from %+v, want purser-nats/%s", name, ref, svc)
				}
				_, hasDB := env["DATABASE_URL"]
				if hasDB == (svc == "ingress") {
					t.Errorf("%s: DATABASE_URL given %v; only the ingress keeps no database", name, hasDB)
				}
			}
			if !pdbs["nats"] {
				t.Error("NATS has no PodDisruptionBudget")
			}
		})
	}
}

// The NATS cluster: three nodes of a pinned server version 2.12 or newer on
// file storage, each with every user's password from the secret that
// nats/auth.conf reads.
func TestNATSIsAThreeNodeJetStreamCluster(t *testing.T) {
	auth, err := os.ReadFile("k8s/base/nats/auth.conf")
	if err != nil {
		t.Fatal(err)
	}
	vars := regexp.MustCompile(`password: \$(\w+)`).FindAllStringSubmatch(string(auth), -1)
	if len(vars) != 5 {
		t.Fatalf("auth.conf names %d passwords, want 5 (admin and four services)", len(vars))
	}
	for _, dir := range overlays {
		t.Run(dir, func(t *testing.T) {
			r := render(t, dir)
			var nats *appsv1.StatefulSet
			for _, s := range each[*appsv1.StatefulSet](r) {
				if s.Name == "nats" {
					nats = s
				}
			}
			if nats == nil || nats.Spec.Replicas == nil || *nats.Spec.Replicas != 3 {
				t.Fatal("no three-replica NATS StatefulSet")
			}
			c := nats.Spec.Template.Spec.Containers[0]
			m := regexp.MustCompile(`:(\d+)\.(\d+)\.(\d+)`).FindStringSubmatch(c.Image)
			if m == nil {
				t.Fatalf("NATS image %q has no version", c.Image)
			}
			major, _ := strconv.Atoi(m[1])
			minor, _ := strconv.Atoi(m[2])
			if major < 2 || major == 2 && minor < 12 {
				t.Errorf("NATS %s.%s: 2.12 or newer is required (2.10.20-22 could lose streams)", m[1], m[2])
			}
			if len(nats.Spec.VolumeClaimTemplates) != 1 {
				t.Error("NATS keeps no volume: JetStream needs file storage")
			}
			env := map[string]bool{}
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == "purser-nats" {
					env[e.Name] = true
				}
			}
			for _, v := range vars {
				if !env[v[1]] {
					t.Errorf("auth.conf reads $%s, which the NATS pods do not get from purser-nats", v[1])
				}
			}
			var conf *corev1.ConfigMap
			for _, cm := range each[*corev1.ConfigMap](r) {
				if strings.HasPrefix(cm.Name, "nats-config") {
					conf = cm
				}
			}
			if conf == nil || conf.Data["auth.conf"] != string(auth) || !strings.Contains(conf.Data["nats.conf"], "include ./auth.conf") {
				t.Error("the NATS configuration does not include the generated auth.conf")
			}
		})
	}
}

// The toolrunner reaches NATS, Postgres, DNS and HTTPS to public
// addresses (Google's APIs), nothing else; everything else is denied.
func TestToolrunnerEgress(t *testing.T) {
	for _, dir := range overlays {
		t.Run(dir, func(t *testing.T) {
			r := render(t, dir)
			labels := map[string]string{"app.kubernetes.io/name": "purser-toolrunner", "purser.io/nats-client": "true", "purser.io/db-client": "true"}
			denied := false
			var ports []string
			for _, p := range each[*networkingv1.NetworkPolicy](r) {
				if !selects(p.Spec.PodSelector.MatchLabels, labels) || !slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
					continue
				}
				if len(p.Spec.Egress) == 0 {
					denied = true
				}
				for _, rule := range p.Spec.Egress {
					for _, port := range rule.Ports {
						for _, to := range rule.To {
							if to.IPBlock != nil && port.Port.IntValue() != 443 && port.Port.IntValue() != 5432 {
								t.Errorf("%s: egress to %s on port %s", p.Name, to.IPBlock.CIDR, port.Port)
							}
							if to.IPBlock != nil && port.Port.IntValue() == 443 && !slices.Contains(to.IPBlock.Except, "169.254.0.0/16") {
								t.Errorf("%s: HTTPS egress reaches the cloud metadata endpoint", p.Name)
							}
						}
						ports = append(ports, fmt.Sprintf("%s/%s", *port.Protocol, port.Port))
					}
				}
			}
			slices.Sort(ports)
			ports = slices.Compact(ports)
			want := []string{"TCP/4222", "TCP/443", "TCP/53", "TCP/5432", "UDP/53"}
			if !denied || !slices.Equal(ports, want) {
				t.Errorf("toolrunner egress: default deny %v, ports %v; want deny and %v", denied, ports, want)
			}
		})
	}
}

func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func TestIngressHasTLSAndLongWebsocketTimeouts(t *testing.T) {
	for _, dir := range overlays {
		t.Run(dir, func(t *testing.T) {
			r := render(t, dir)
			ings := each[*networkingv1.Ingress](r)
			if len(ings) != 1 {
				t.Fatalf("%d Ingresses, want 1", len(ings))
			}
			in := ings[0]
			if len(in.Spec.TLS) == 0 || in.Spec.TLS[0].SecretName == "" || !slices.Contains(in.Spec.TLS[0].Hosts, in.Spec.Rules[0].Host) {
				t.Error("the Ingress does not terminate TLS for its host")
			}
			for _, a := range []string{"nginx.ingress.kubernetes.io/proxy-read-timeout", "nginx.ingress.kubernetes.io/proxy-send-timeout"} {
				if s, _ := strconv.Atoi(in.Annotations[a]); s < 600 {
					t.Errorf("%s = %q: a websocket would be cut", a, in.Annotations[a])
				}
			}
			for _, rule := range in.Spec.Rules {
				for _, p := range rule.HTTP.Paths {
					if p.Backend.Service.Name != "purser-ingress" {
						t.Errorf("the Ingress routes %s to %s", p.Path, p.Backend.Service.Name)
					}
				}
			}
		})
	}
}

func TestMigrationJob(t *testing.T) {
	for _, dir := range overlays {
		r := render(t, dir)
		jobs := each[*batchv1.Job](r)
		if len(jobs) != 1 || !slices.Equal(jobs[0].Spec.Template.Spec.Containers[0].Args, []string{"migrate"}) {
			t.Errorf("%s: want one Job running `purser migrate`", dir)
		}
	}
}
