package deploy

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// The PrometheusRule holds exactly the plain rules file's groups.
func TestPrometheusRuleIsTheRulesFile(t *testing.T) {
	var plain struct {
		Groups any `json:"groups"`
	}
	readYAML(t, "monitoring/rules.yml", &plain)
	var rule struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Metadata   map[string]any `json:"metadata"`
		Spec       struct {
			Groups any `json:"groups"`
		} `json:"spec"`
	}
	readYAML(t, "monitoring/prometheusrule.yaml", &rule)
	if rule.APIVersion != "monitoring.coreos.com/v1" || rule.Kind != "PrometheusRule" {
		t.Fatalf("prometheusrule.yaml is a %s %s", rule.APIVersion, rule.Kind)
	}
	if !reflect.DeepEqual(plain.Groups, rule.Spec.Groups) {
		t.Fatal("prometheusrule.yaml's groups differ from rules.yml: copy rules.yml's groups under spec")
	}
}

// exported are the metric names purser's code registers.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	re := regexp.MustCompile(`"(purser_[a-z0-9_]+)"`)
	for _, dir := range []string{"../internal", "../services", "../cmd"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				names[m[1]] = true
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !names["purser_build_info"] || !names["purser_bus_consumer_pending"] {
		t.Fatalf("found %d metric names in the code; the scan is broken", len(names))
	}
	return names
}

var metricRef = regexp.MustCompile(`\bpurser_[a-z0-9_]+`)

func unknownMetrics(expr string, known map[string]bool) []string {
	var out []string
	for _, m := range metricRef.FindAllString(expr, -1) {
		base := m
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(m, suffix); ok && known[b] {
				base = b
			}
		}
		if !known[base] {
			out = append(out, m)
		}
	}
	return out
}

func TestRulesUseExportedMetrics(t *testing.T) {
	known := exported(t)
	b, err := os.ReadFile("monitoring/rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	if bad := unknownMetrics(string(b), known); len(bad) > 0 {
		t.Errorf("rules.yml uses metrics purser does not export: %v", bad)
	}
}

type dashboard struct {
	UID    string  `json:"uid"`
	Title  string  `json:"title"`
	Panels []panel `json:"panels"`
}

type panel struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	ID      int    `json:"id"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// The dashboard covers turns, model, tools, bus, websocket, imports and the store,
// and every query names a metric purser exports.
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile("monitoring/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	if d.UID == "" || d.Title == "" {
		t.Error("the dashboard has no uid or title")
	}
	known := exported(t)
	var rows []string
	ids := map[int]bool{}
	queries := 0
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d is used twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			rows = append(rows, p.Title)
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			queries++
			if bad := unknownMetrics(tg.Expr, known); len(bad) > 0 || !metricRef.MatchString(tg.Expr) {
				t.Errorf("panel %q queries %q: unknown metrics %v", p.Title, tg.Expr, bad)
			}
			if strings.Contains(tg.Expr, "tenant") || strings.Contains(tg.Expr, "user") {
				t.Errorf("panel %q groups by a label that grows with tenants or users: %s", p.Title, tg.Expr)
			}
		}
	}
	for _, want := range []string{"Turns", "Model", "Tools", "Bus", "Websocket and HTTP", "Imports", "Store"} {
		if !slices.Contains(rows, want) {
			t.Errorf("no %q row; rows: %v", want, rows)
		}
	}
	if queries < 30 {
		t.Errorf("%d queries", queries)
	}
}

// The PodMonitor scrapes a port every purser service has.
func TestPodMonitorFindsTheMetricsPort(t *testing.T) {
	var pm struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Metadata   map[string]any `json:"metadata"`
		Spec       struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			PodMetricsEndpoints []struct {
				Port     string `json:"port"`
				Path     string `json:"path"`
				Interval string `json:"interval"`
			} `json:"podMetricsEndpoints"`
		} `json:"spec"`
	}
	readYAML(t, "monitoring/podmonitor.yaml", &pm)
	if pm.Kind != "PodMonitor" || len(pm.Spec.PodMetricsEndpoints) != 1 {
		t.Fatalf("podmonitor.yaml: %+v", pm)
	}
	port := pm.Spec.PodMetricsEndpoints[0].Port
	r := render(t, overlays[1])
	found := 0
	for _, d := range each[*appsv1.Deployment](r) {
		if !selects(pm.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
			continue
		}
		found++
		ok := false
		for _, p := range d.Spec.Template.Spec.Containers[0].Ports {
			ok = ok || p.Name == port
		}
		if !ok {
			t.Errorf("%s has no port %q", d.Name, port)
		}
	}
	if found != len(services) {
		t.Errorf("the PodMonitor selects %d Deployments, want %d", found, len(services))
	}
}
