package offline

import (
	"regexp"
	"strings"

	"github.com/purser-ai/purser/services/orchestrator"
)

// French is read by rewriting its everyday phrasings into the English
// ones the readers know, phrase by phrase, longest first; what is said
// back is French when the person wrote French or their locale is French.

// frenchRe tells French text by words English does not use.
// (Go's \b knows ASCII letters only, so words ending in an accent have
// none after them.)
var frenchRe = regexp.MustCompile(`(?i)\b(?:combien|depense|j'ai|ai-je|ce mois-ci|mois dernier|cette|semaine|aujourd'hui|hier|ajoute|ajouter|montre|affiche|supprime|annule|importe[rz]?|quelles?|qu'est-ce|vérifier|mes|pour|chez|merci|bonjour|cherche|trouve|souviens|rappelle|virement|factures?)\b|\b(?:dépens|année|catégorie|règle|payé|acheté|reçu)`)

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
	{regexp.MustCompile(`(?i)\bimporte[rz]? le premier\b`), "import the first one"},
	{regexp.MustCompile(`(?i)\bimporte[rz]?\b`), "import"},
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

// proposalFR rewrites a proposal as a French speaker is shown it into
// the English one the follow-up readers know, in order: "Proposed:
// Ajouter la dépense « pain » de 1 234,50 € le 22/11/2026 ?" reads as
// "Proposed: Add expense 'pain' €1234.50 on 2026-11-22?".
var proposalFR = []struct {
	re *regexp.Regexp
	en string
}{
	{regexp.MustCompile(`^Proposed: Ajouter la dépense « (.*?) » de `), "Proposed: Add expense '$1' "},
	{regexp.MustCompile(`^Proposed: Modifier la dépense #`), "Proposed: Change expense #"},
	{regexp.MustCompile(`^Proposed: Supprimer la dépense #`), "Proposed: Delete expense #"},
	{regexp.MustCompile(`\b(\d{2})/(\d{2})/(\d{4})\b`), "$3-$2-$1"},
	{regexp.MustCompile(` le (\d{4}-\d{2}-\d{2})`), " on $1"},
	{regexp.MustCompile(` dans la catégorie `), " in "},
	{regexp.MustCompile(`libellé « (.*?) »`), "item '$1'"},
	{regexp.MustCompile(` → « (.*?) »`), " → '$1'"},
	{regexp.MustCompile(`\bmontant `), "amount "},
	{regexp.MustCompile(`\bcatégorie `), "category "},
	{regexp.MustCompile(`\bdevise `), "currency "},
	{regexp.MustCompile(` : `), ": "},
	{regexp.MustCompile(` \?$`), "?"},
}

// frenchMoney is money as the server writes it in French: 1 234,50 €.
var frenchMoney = regexp.MustCompile(`(-?)(\d{1,3}(?:\x{202f}\d{3})*)(,\d+)?\x{00a0}(\p{Sc}|[A-Z]{3})`)

// englishProposal is a French proposal from history in English; any
// other text as it is.
func englishProposal(q string) string {
	if !strings.HasPrefix(q, "Proposed: ") || !strings.Contains(q, " la dépense ") {
		return q
	}
	q = frenchMoney.ReplaceAllStringFunc(q, func(m string) string {
		p := frenchMoney.FindStringSubmatch(m)
		num := strings.ReplaceAll(p[2], "\u202f", "") + strings.Replace(p[3], ",", ".", 1)
		if p[4][0] < 'A' || p[4][0] > 'Z' { // a sign, written first in English
			return p[1] + p[4] + num
		}
		return p[1] + num + " " + p[4]
	})
	for _, r := range proposalFR {
		q = r.re.ReplaceAllString(q, r.en)
	}
	return q
}
