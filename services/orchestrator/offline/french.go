package offline

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// French is read by rewriting its everyday phrasings into the English
// ones the readers know, phrase by phrase, longest first; what is said
// back is French when the person wrote French or their locale is French.

// frenchRe tells French text by words English does not use.
// (Go's \b knows ASCII letters only, so words ending in an accent have
// none after them.)
var frenchRe = regexp.MustCompile(`(?i)\b(?:combien|depense|j'ai|ai-je|ce mois-ci|mois dernier|cette|semaine|aujourd'hui|hier|ajoute|ajouter|montre|affiche|supprime|annule|quelles?|qu'est-ce|vérifier|mes|pour|chez|merci|bonjour|cherche|trouve|souviens|rappelle|virement|factures?)\b|\b(?:dépens|année|catégorie|règle|payé|acheté|reçu)`)

// frenchPhrases rewrites French into English, in order.
var frenchPhrases = []struct {
	re *regexp.Regexp
	en string
}{
	{regexp.MustCompile(`(?i)\bqu'est-ce que j'ai dit\b|\bqu'ai-je dit\b`), "what did I say"},
	{regexp.MustCompile(`(?i)à propos d[eu']\s*|\bau sujet d[eu']\s*`), "about "},
	{regexp.MustCompile(`(?i)\bcombien (?:ai-je|j'ai) dépensé|\bcombien ai-je depense\b`), "how much did I spend"},
	{regexp.MustCompile(`(?i)\bqu'est-ce que j'ai dépensé|\bqu'ai-je dépensé`), "what did I spend"},
	{regexp.MustCompile(`(?i)\bmes dépenses\b`), "my expenses"},
	{regexp.MustCompile(`(?i)\b(?:montre|affiche|liste)(?:-moi)?\b`), "show"},
	{regexp.MustCompile(`(?i)\bj'ai dépensé`), "I spent"},
	{regexp.MustCompile(`(?i)\bj'ai payé`), "I paid"},
	{regexp.MustCompile(`(?i)\bj'ai acheté`), "I bought"},
	{regexp.MustCompile(`(?i)\bajoute[rz]?\b`), "add"},
	{regexp.MustCompile(`(?i)\bsupprime[rz]?\b`), "delete"},
	{regexp.MustCompile(`(?i)\bannule[rz]?(?: ça| cela| la dernière modification)?\b`), "undo"},
	{regexp.MustCompile(`(?i)\bla dépense|\bdépense`), "expense"},
	{regexp.MustCompile(`(?i)\bce mois-ci\b|\bce mois\b`), "this month"},
	{regexp.MustCompile(`(?i)\ble mois dernier\b|\bmois dernier\b`), "last month"},
	{regexp.MustCompile(`(?i)\bcette semaine\b`), "this week"},
	{regexp.MustCompile(`(?i)\bla semaine dernière`), "last week"},
	{regexp.MustCompile(`(?i)\bcette année`), "this year"},
	{regexp.MustCompile(`(?i)\bl'année dernière`), "last year"},
	{regexp.MustCompile(`(?i)\baujourd'hui\b`), "today"},
	{regexp.MustCompile(`(?i)\bhier\b`), "yesterday"},
	{regexp.MustCompile(`(?i)\bquelles sont mes catégories|\bmes catégories`), "what categories do I have"},
	{regexp.MustCompile(`(?i)\bmes règles`), "show my rules"},
	{regexp.MustCompile(`(?i)\b(?:qu'est-ce qui est|quoi|y a-t-il quelque chose|ai-je quelque chose) à vérifier\b`), "what needs review"},
	{regexp.MustCompile(`(?i)\bcherche(?:r)?\b|\btrouve(?:r)?\b`), "find"},
	{regexp.MustCompile(`(?i)\bmes reçus\b|\bmes factures\b`), "my receipts"},
	{regexp.MustCompile(`(?i)\bchez\b`), "at"},
	{regexp.MustCompile(`(?i)\bau\b|(?:^|\s)à la\b|\baux\b`), "on"},
	{regexp.MustCompile(`(?i)\bpour\b`), "for"},
	{regexp.MustCompile(`(?i)\bde\b|\bdu\b|\bdes\b|\ben\b`), "in"},
	{regexp.MustCompile(`(?i)\bun\b|\bune\b|\ble\b|\bla\b|\bles\b|\bl'`), " "},
	{regexp.MustCompile(`(?i)^(?:merci|super|parfait)\b.*`), "thanks"},
	{regexp.MustCompile(`(?i)^(?:bonjour|salut|bonsoir)\b`), "hello"},
}

// isFrench reports whether a turn is in French: the person's locale
// says so, or their words do.
func isFrench(p orchestrator.Prompt) bool {
	return strings.HasPrefix(strings.ToLower(p.Locale), "fr") || frenchRe.MatchString(p.Text)
}

// fromFrench is French text in the English the readers know.
func fromFrench(text string) string {
	if !frenchRe.MatchString(text) {
		return text
	}
	for _, ph := range frenchPhrases {
		text = ph.re.ReplaceAllString(text, ph.en)
	}
	return strings.Join(strings.Fields(text), " ")
}

// frenchHelp says what the model can do, in French.
const frenchHelp = "Je peux ajouter, modifier, supprimer et lister vos dépenses, totaliser ce que vous avez dépensé et montrer où est passé votre argent. Essayez « j'ai dépensé 12,50 € pour le déjeuner » ou « combien ai-je dépensé ce mois-ci ? »."

// inFrench says a decision back in French where the model's own words
// are: its answers and questions. A tool call is the same in both.
func inFrench(d orchestrator.Decision) orchestrator.Decision {
	switch d.Kind {
	case orchestrator.DecisionAnswer:
		if strings.HasPrefix(d.Content, "Hello") {
			d.Content = "Bonjour ! " + frenchHelp
		} else if strings.HasPrefix(d.Content, "I'm not sure") || d.Content == helpText {
			d.Content = "Je ne suis pas sûr de comprendre. " + frenchHelp
		} else if strings.HasPrefix(d.Content, "You're welcome") {
			d.Content = "Avec plaisir ! Demandez-moi ce que vous avez dépensé, ou dites-moi ce que vous avez acheté."
		}
	case orchestrator.DecisionClarify:
		if m := howMuchRe.FindStringSubmatch(d.Question); m != nil && m[1] != "" {
			d.Question = "Combien a coûté " + m[1] + " ?"
			break
		}
		d.Question = "Pouvez-vous préciser ? Dites par exemple « ajoute déjeuner 12,50 € » ou « combien ai-je dépensé ce mois-ci ? »."
	}
	return d
}

// describeFrench reads a result aloud in French, for the results it
// knows; ok is false for the others (the server's English stays).
func describeFrench(st orchestrator.StepRecord) (string, bool) {
	if st.Decision == "rejected" || !st.OK {
		return "", false
	}
	switch st.Tool {
	case contracts.ToolGetBalance:
		var out contracts.Balance
		if json.Unmarshal(st.Data, &out) != nil {
			return "", false
		}
		when := frenchRange(out.Range)
		if out.Count == 0 {
			return "Vous n'avez aucune dépense " + when + ".", true
		}
		parts := make([]string, len(out.Total))
		for i, m := range out.Total {
			parts[i] = orchestrator.FormatMoneyIn("fr", m)
		}
		s := "dépense"
		if out.Count > 1 {
			s = "dépenses"
		}
		return fmt.Sprintf("Vous avez dépensé %s %s, en %d %s.", strings.Join(parts, " + "), when, out.Count, s), true
	}
	return "", false
}

// frenchRange names a range in French.
func frenchRange(r string) string {
	switch r {
	case "today":
		return "aujourd'hui"
	case "yesterday":
		return "hier"
	case "this_week":
		return "cette semaine"
	case "last_week":
		return "la semaine dernière"
	case "this_month":
		return "ce mois-ci"
	case "last_month":
		return "le mois dernier"
	case "this_year":
		return "cette année"
	case "last_year":
		return "l'année dernière"
	case "all_time":
		return "depuis le début"
	}
	return "sur la période " + r
}
