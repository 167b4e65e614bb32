package offline

import (
	"strings"

	"github.com/purser-ai/purser/services/orchestrator"
)

// French is read by rewriting its everyday phrasings into the English
// ones the readers know, phrase by phrase, longest first; what is said
// back is French when the person wrote French or their locale is French.

// frenchRe tells French text by words English does not use.
// (Go's \b knows ASCII letters only, so words ending in an accent have
// none after them.)
var frenchRe = mustCompile(`(?i)\b(?:combien|depense|j'ai|ai-je|ce mois-ci|mois dernier|cette|semaine|aujourd'hui|hier|ajoute|ajouter|montre|affiche|supprime|annule|importe[rz]?|quelles?|qu'est-ce|vérifier|mes|pour|chez|merci|bonjour|cherche|trouve|souviens|rappelle|virement|factures?)\b|\b(?:dépens|année|catégorie|règle|payé|acheté|reçu)`)

// frenchPhrases rewrites French into English, in order.
var frenchPhrases = []struct {
	re *pattern
	en string
}{
	{mustCompile(`(?i)\bqu'est-ce que j'ai dit\b|\bqu'ai-je dit\b`), "what did I say"},
	{mustCompile(`(?i)à propos d[eu']\s*|\bau sujet d[eu']\s*`), "about "},
	{mustCompile(`(?i)\bcombien (?:ai-je|j'ai) dépensé|\bcombien ai-je depense\b`), "how much did I spend"},
	{mustCompile(`(?i)\bqu'est-ce que j'ai dépensé|\bqu'ai-je dépensé`), "what did I spend"},
	{mustCompile(`(?i)\bmes dépenses\b`), "my expenses"},
	{mustCompile(`(?i)\b(?:montre|affiche|liste)(?:-moi)?\b`), "show"},
	{mustCompile(`(?i)\bj'ai dépensé`), "I spent"},
	{mustCompile(`(?i)\bj'ai payé`), "I paid"},
	{mustCompile(`(?i)\bj'ai acheté`), "I bought"},
	{mustCompile(`(?i)\bajoute[rz]?\b`), "add"},
	{mustCompile(`(?i)\bsupprime[rz]?\b`), "delete"},
	{mustCompile(`(?i)\bimporte[rz]? le premier\b`), "import the first one"},
	{mustCompile(`(?i)\bimporte[rz]?\b`), "import"},
	{mustCompile(`(?i)\bannule[rz]?(?: ça| cela| la dernière modification)?\b`), "undo"},
	{mustCompile(`(?i)\bla dépense|\bdépense`), "expense"},
	{mustCompile(`(?i)\bce mois-ci\b|\bce mois\b`), "this month"},
	{mustCompile(`(?i)\ble mois dernier\b|\bmois dernier\b`), "last month"},
	{mustCompile(`(?i)\bcette semaine\b`), "this week"},
	{mustCompile(`(?i)\bla semaine dernière`), "last week"},
	{mustCompile(`(?i)\bcette année`), "this year"},
	{mustCompile(`(?i)\bl'année dernière`), "last year"},
	{mustCompile(`(?i)\baujourd'hui\b`), "today"},
	{mustCompile(`(?i)\bhier\b`), "yesterday"},
	{mustCompile(`(?i)\bquelles sont mes catégories|\bmes catégories`), "what categories do I have"},
	{mustCompile(`(?i)\bmes règles`), "show my rules"},
	{mustCompile(`(?i)\b(?:qu'est-ce qui est|quoi|y a-t-il quelque chose|ai-je quelque chose) à vérifier\b`), "what needs review"},
	{mustCompile(`(?i)\bcherche(?:r)?\b|\btrouve(?:r)?\b`), "find"},
	{mustCompile(`(?i)\bmes reçus\b|\bmes factures\b`), "my receipts"},
	{mustCompile(`(?i)\bchez\b`), "at"},
	{mustCompile(`(?i)\bau\b|(?:^|\s)à la\b|\baux\b`), "on"},
	{mustCompile(`(?i)\bpour\b`), "for"},
	{mustCompile(`(?i)\bde\b|\bdu\b|\bdes\b|\ben\b`), "in"},
	{mustCompile(`(?i)\bun\b|\bune\b|\ble\b|\bla\b|\bles\b|\bl'`), " "},
	{mustCompile(`(?i)^(?:merci|super|parfait)\b.*`), "thanks"},
	{mustCompile(`(?i)^(?:bonjour|salut|bonsoir)\b`), "hello"},
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
	re *pattern
	en string
}{
	{mustCompile(`^Proposed: Ajouter la dépense « (.*?) » de `), "Proposed: Add expense '$1' "},
	{mustCompile(`^Proposed: Modifier la dépense #`), "Proposed: Change expense #"},
	{mustCompile(`^Proposed: Supprimer la dépense #`), "Proposed: Delete expense #"},
	{mustCompile(`\b(\d{2})/(\d{2})/(\d{4})\b`), "$3-$2-$1"},
	{mustCompile(` le (\d{4}-\d{2}-\d{2})`), " on $1"},
	{mustCompile(` dans la catégorie `), " in "},
	{mustCompile(`libellé « (.*?) »`), "item '$1'"},
	{mustCompile(` → « (.*?) »`), " → '$1'"},
	{mustCompile(`\bmontant `), "amount "},
	{mustCompile(`\bcatégorie `), "category "},
	{mustCompile(`\bdevise `), "currency "},
	{mustCompile(` : `), ": "},
	{mustCompile(` \?$`), "?"},
}

// frenchMoney is money as the server writes it in French: 1 234,50 €.
var frenchMoney = mustCompile(`(-?)(\d{1,3}(?:\x{202f}\d{3})*)(,\d+)?\x{00a0}(\p{Sc}|[A-Z]{3})`)

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
