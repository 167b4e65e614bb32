package deploy

import (
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// defaultMaxBytes mirrors bus.DefaultMaxBytes (internal/bus/streams.go).
var defaultMaxBytes = map[string]int64{"TURNS": 256 << 20, "TOOLS": 512 << 20, "AGENT": 512 << 20, "NOTIFY": 256 << 20, "DLQ": 128 << 20}

func parseSize(t *testing.T, s string) int64 {
	t.Helper()
	u := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	mult := int64(1)
	for suffix, m := range map[string]int64{"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40} {
		if v, ok := strings.CutSuffix(u, suffix); ok {
			u, mult = v, m
		}
	}
	n, err := strconv.ParseInt(u, 10, 64)
	if err != nil {
		t.Fatalf("size %q: %v", s, err)
	}
	return n * mult
}

// Every node of the cluster holds a replica of every stream: the streams'
// bounds together must fit its volume, or JetStream fills the disk.
func TestStreamBoundsFitTheNATSVolume(t *testing.T) {
	for _, dir := range overlays {
		t.Run(dir, func(t *testing.T) {
			r := render(t, dir)
			var setting string
			for _, cm := range each[*corev1.ConfigMap](r) {
				if strings.HasPrefix(cm.Name, "purser") {
					setting = cm.Data["PURSER_STREAM_MAX_BYTES"]
				}
			}
			bounds := map[string]int64{}
			for name, v := range defaultMaxBytes {
				bounds[name] = v
			}
			var every int64
			named := map[string]bool{}
			for _, entry := range strings.Split(setting, ",") {
				if entry = strings.TrimSpace(entry); entry == "" {
					continue
				}
				if name, v, ok := strings.Cut(entry, "="); ok {
					bounds[strings.ToUpper(name)] = parseSize(t, v)
					named[strings.ToUpper(name)] = true
				} else {
					every = parseSize(t, entry)
				}
			}
			var total int64
			for name, v := range bounds {
				if every > 0 && !named[name] {
					v = every
				}
				total += v
			}
			for _, s := range each[*appsv1.StatefulSet](r) {
				if s.Name != "nats" {
					continue
				}
				volume := s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]
				if total > volume.Value()*9/10 {
					t.Errorf("streams may hold %d MiB, the NATS volume is %s", total>>20, volume.String())
				}
			}
		})
	}
}
