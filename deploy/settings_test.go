package deploy

import (
	"os"
	"regexp"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// Every setting the manifests give purser is one it reads: a misspelt
// name would be ignored without a word.
func TestManifestsGiveOnlySettingsPurserReads(t *testing.T) {
	src, err := os.ReadFile("../internal/config/config.go")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`get\("([A-Z0-9_]+)"`).FindAllStringSubmatch(string(src), -1) {
		known[m[1]] = true
	}
	if !known["PURSER_STREAM_REPLICAS"] || !known["NATS_URL"] {
		t.Fatalf("read %d settings from config.go; the scan is broken", len(known))
	}
	for _, dir := range overlays {
		t.Run(dir, func(t *testing.T) {
			r := render(t, dir)
			for _, cm := range each[*corev1.ConfigMap](r) {
				if len(cm.Name) < 6 || cm.Name[:6] != "purser" {
					continue
				}
				for k := range cm.Data {
					if !known[k] {
						t.Errorf("ConfigMap %s sets %s, which purser does not read", cm.Name, k)
					}
				}
			}
			var containers []corev1.Container
			for _, d := range each[*appsv1.Deployment](r) {
				containers = append(containers, d.Spec.Template.Spec.Containers...)
			}
			for _, j := range each[*batchv1.Job](r) {
				containers = append(containers, j.Spec.Template.Spec.Containers...)
			}
			for _, c := range containers {
				for _, e := range c.Env {
					if !known[e.Name] {
						t.Errorf("container %s sets %s, which purser does not read", c.Name, e.Name)
					}
				}
			}
		})
	}
}
