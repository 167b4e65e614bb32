package orchestrator

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
)

// describeSearch reads a search's results aloud: each record's kind,
// date, title and amount, best first.
func describeSearch(l lang, data json.RawMessage) string {
	var out contracts.SearchResults
	_ = json.Unmarshal(data, &out)
	if len(out.Results) == 0 {
		return l.say("I found nothing that matches.", "Je n'ai rien trouvé de correspondant.")
	}
	var b strings.Builder
	b.WriteString(l.sayf("I found %s, best match first:\n", "J'ai trouvé %s, le plus pertinent d'abord :\n", l.count(len(out.Results), nRecord)))
	for _, r := range out.Results {
		line := "- " + l.kind(r.Kind)
		if r.Date != "" {
			line += " " + l.date(r.Date)
		}
		line += " " + quote(r.Title)
		if r.Amount != nil {
			line += ", " + l.money(*r.Amount)
		}
		b.WriteString(line + "\n")
	}
	if out.Degraded != "" {
		b.WriteString(l.say("(Matched by words only: ", "(Recherche par mots seulement : ") + out.Degraded + ".)\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// recordCitations are the records the turn's searches found, as the
// answer's sources: each once (by kind and id, at its best score),
// sorted by score, best first. When there are any, they replace the
// citations of tool outputs, so an answer built on a search names records,
// never a tool.
func recordCitations(steps []StepRecord, toolCites []contracts.Citation) []contracts.Citation {
	best := map[string]contracts.Citation{}
	for _, st := range steps {
		if !st.OK || st.Tool != contracts.ToolSearch {
			continue
		}
		var out contracts.SearchResults
		if json.Unmarshal(st.Data, &out) != nil {
			continue
		}
		for _, r := range out.Results {
			key := r.Kind + ":" + r.ID
			if old, ok := best[key]; ok && old.Score >= r.Score {
				continue
			}
			best[key] = contracts.Citation{CallID: st.CallID, Tool: st.Tool, Kind: r.Kind, ID: r.ID, Title: r.Title, URL: r.URL, Score: r.Score}
		}
	}
	if len(best) == 0 {
		return toolCites
	}
	cites := make([]contracts.Citation, 0, len(best))
	for _, c := range best {
		cites = append(cites, c)
	}
	slices.SortFunc(cites, func(a, b contracts.Citation) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Kind+":"+a.ID, b.Kind+":"+b.ID)
	})
	return cites
}
