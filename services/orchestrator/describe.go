package orchestrator

import (
	"cmp"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
)

// DescribeStepIn is the server's own sentence for how a tool step ended,
// in the language of locale ("fr-FR" or "fr": French; anything else
// English): a decision the person made, a failure, or the result read
// aloud (every item of a list, with a total). The orchestrator answers
// with it when the model says nothing after tool calls; the offline model
// answers with it always. It never shows internal ids such as call ids.
// Every value it reads from the step (a subject, a file name, an item, an
// error) is quoted with contracts.QuoteText, and stays in the language it
// came in: only the server's own words are markdown, and translated.
func DescribeStepIn(locale string, st StepRecord) string {
	l := langOf(locale)
	r := rowOf(st.Tool)
	verb := cmp.Or(r.verb, phrase{"do that", "le faire"})
	switch {
	case st.Decision == "rejected":
		return l.say("OK, I won't "+verb.en+". ", "D'accord, je ne vais pas "+verb.fr+". ") + AskWhatToChangeIn(locale)
	case !st.OK && l == french && frenchFailures[st.Code] != "":
		// The toolrunner's words are English; a failure every tool may
		// meet is said in French from its code.
		msg := frenchFailures[st.Code]
		if st.Code == contracts.CodeRateLimited && st.RetryAfter > 0 {
			msg = fmt.Sprintf("trop de demandes ; réessayez dans %d s.", st.RetryAfter)
		}
		return "Je n'ai pas pu " + verb.fr + " : " + msg
	case !st.OK:
		return l.say("I couldn't "+verb.en+": ", "Je n'ai pas pu "+verb.fr+" : ") + quote(st.Error)
	case r.describe == nil:
		return l.say("Done.", "C'est fait.")
	}
	return r.describe(l, st.Data)
}

// frenchFailures are the failures any tool may meet, by code, in French.
var frenchFailures = map[string]string{
	contracts.CodeTimedOut:        "cela a pris plus de temps que permis, je l'ai arrêté ; rien n'a été modifié. Vous pouvez réessayer.",
	contracts.CodeTimeout:         "la demande a expiré avant de pouvoir être faite ; rien n'a été modifié.",
	contracts.CodeRateLimited:     "trop de demandes ; réessayez dans un instant.",
	contracts.CodeForbidden:       "votre accès est en lecture seule ; rien n'a été modifié.",
	contracts.CodeInternal:        "l'outil a échoué ; veuillez réessayer.",
	contracts.CodeUnknownTool:     "cet outil n'est pas disponible.",
	contracts.CodeNotConfirmed:    "cette modification demande d'abord votre accord ; rien n'a été modifié.",
	contracts.CodeProposalInvalid: "cette modification a déjà été faite.",
}

// AskWhatToChange follows a declined proposal: a no is rarely "never",
// more often "not quite", so the person is asked what to change and the
// proposal's values stay for the edit.
const AskWhatToChange = "What should I change? Tell me, e.g. \"14, not 12.50\" or \"make it yesterday\", and I'll propose it again."

// askWhatToChangeFR is AskWhatToChange in French.
const askWhatToChangeFR = "Que faut-il changer ? Dites-le-moi, par exemple « 14, pas 12,50 » ou « plutôt hier », et je la proposerai à nouveau."

// AskWhatToChangeIn is AskWhatToChange in the language of locale.
func AskWhatToChangeIn(locale string) string {
	return langOf(locale).say(AskWhatToChange, askWhatToChangeFR)
}

// describeExpenseChange reads aloud the expense a step added, changed or
// deleted, what saying which.
func describeExpenseChange(what phrase) func(lang, json.RawMessage) string {
	return func(l lang, data json.RawMessage) string {
		var out contracts.ExpenseChanged
		_ = json.Unmarshal(data, &out)
		e := out.Expense
		if l == french {
			return fmt.Sprintf("Dépense #%d %s : %s, %s le %s%s.", e.ID, what.fr, quote(e.Item), l.money(e.Amount), l.date(e.Date), categorySuffix(e.Category))
		}
		return fmt.Sprintf("%s expense #%d: %s, %s on %s%s.", what.en, e.ID, quote(e.Item), FormatMoney(e.Amount), e.Date, categorySuffix(e.Category))
	}
}

func describePreferencesSaved(l lang, data json.RawMessage) string {
	var out contracts.Preferences
	_ = json.Unmarshal(data, &out)
	return l.say("Saved. Your defaults: ", "C'est enregistré. Vos réglages : ") + describePreferences(l, out) + "."
}

func describeBalance(l lang, data json.RawMessage) string {
	var out contracts.Balance
	_ = json.Unmarshal(data, &out)
	var s string
	on := ""
	if out.Query != "" {
		on = l.say(" on ", " pour ") + quote(out.Query)
	}
	when := rangeWords(l, out.Range, out.From, out.To)
	switch {
	case out.Count == 0 && on != "":
		s = l.sayf("You have nothing%s %s", "Vous n'avez rien%s %s", on, when)
	case out.Count == 0:
		s = l.sayf("You have no expenses %s", "Vous n'avez aucune dépense %s", when)
	default:
		s = l.sayf("You spent %s%s %s across %s", "Vous avez dépensé %s%s %s, en %s", totals(l, out.Total), on, when, l.count(out.Count, nExpense))
	}
	if out.Transfers > 0 {
		// Money moved between the person's own accounts is not spending.
		n := l.count(out.Transfers, nTransfer)
		s += l.say("; "+n+" between your accounts left out", " ; "+n+" entre vos comptes "+l.word(out.Transfers, noun{fr: "n'est pas compté", frs: "ne sont pas comptés"}))
	}
	return s + "."
}

// symbols are the currency signs people read without a code.
var symbols = map[string]string{"GBP": "£", "USD": "$", "EUR": "€", "JPY": "¥", "INR": "₹", "KRW": "₩", "NGN": "₦", "ILS": "₪",
	"PHP": "₱", "VND": "₫", "UAH": "₴", "TRY": "₺", "THB": "฿"}

// FormatMoney writes minor units as a person reads them, with the
// currency's own decimals: £1,234.50, ¥1,200, 1.250 KWD.
func FormatMoney(m contracts.Money) string {
	sign, minor := "", m.Minor
	if minor < 0 {
		sign, minor = "-", -minor
	}
	digits := contracts.FormatMinor(minor, m.Currency)
	whole, frac, hasFrac := strings.Cut(digits, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	if sym, ok := symbols[m.Currency]; ok {
		return sign + sym + b.String()
	}
	return sign + b.String() + " " + m.Currency
}

func totals(l lang, ms []contracts.Money) string {
	if len(ms) == 0 {
		return l.say("nothing", "rien")
	}
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = l.money(m)
	}
	return strings.Join(parts, " + ")
}

func categorySuffix(c string) string {
	if c == "" {
		return ""
	}
	return " (" + quote(c) + ")"
}

// quote is contracts.QuoteText: text from outside, or chosen by a model,
// shown inside a sentence of the server as the characters it holds.
func quote(s string) string { return contracts.QuoteText(s) }

// quoteAll quotes each of ss.
func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = quote(s)
	}
	return out
}

// rangeWords names a range as a sentence ends with it: "this month", "ce
// mois-ci", "in November 2026", "du 01/11/2026 au 22/11/2026".
func rangeWords(l lang, r, from, to string) string {
	if w, ok := namedRanges[r]; ok {
		return w.in(l)
	}
	if d, ok := strings.CutPrefix(r, "since_"); ok {
		return l.say("since ", "depuis le ") + l.date(d)
	}
	if len(r) == 4 {
		return l.say("in ", "en ") + r
	}
	if year, q, ok := strings.Cut(r, "-Q"); ok {
		return l.say("in "+r, "au T"+q+" "+year)
	}
	if len(r) == len("2006-01") {
		return l.say("in ", "en ") + monthWords(l, r)
	}
	if from == to && from != "" {
		return l.say("on ", "le ") + l.date(from)
	}
	if from != "" {
		return l.sayf("from %s to %s", "du %s au %s", l.date(from), l.date(to))
	}
	return l.say("in that period", "sur cette période")
}

// namedRanges are the ranges with a name of their own.
var namedRanges = map[string]phrase{
	"today": {"today", "aujourd'hui"}, "yesterday": {"yesterday", "hier"},
	"this_week": {"this week", "cette semaine"}, "last_week": {"last week", "la semaine dernière"},
	"this_month": {"this month", "ce mois-ci"}, "last_month": {"last month", "le mois dernier"},
	"this_quarter": {"this quarter", "ce trimestre"}, "last_quarter": {"last quarter", "le trimestre dernier"},
	"this_year": {"this year", "cette année"}, "last_year": {"last year", "l'année dernière"},
	"all_time": {"in all", "depuis le début"},
}

func describeExpenses(l lang, data json.RawMessage) string {
	var out contracts.ExpenseList
	_ = json.Unmarshal(data, &out)
	if out.ID != 0 {
		if len(out.Expenses) == 0 {
			return noExpense(l, out)
		}
		e := out.Expenses[0]
		return l.sayf("Expense #%d: %s.", "Dépense #%d : %s.", e.ID, expenseWords(l, e))
	}
	where := rangeWords(l, out.Range, out.From, out.To)
	if out.Category != "" {
		where = l.say("on ", "dans la catégorie ") + quote(out.Category) + " " + where
	}
	if len(out.Expenses) == 0 {
		return l.say("You have no expenses ", "Vous n'avez aucune dépense ") + where + "."
	}
	var b strings.Builder
	b.WriteString(l.sayf("Your expenses %s:\n", "Vos dépenses %s :\n", where))
	for _, e := range out.Expenses {
		fmt.Fprintf(&b, "- #%d %s %s, %s%s\n", e.ID, l.date(e.Date), quote(e.Item), l.money(e.Amount), categorySuffix(e.Category))
	}
	b.WriteString(l.sayf("Total: %s (%s).", "Total : %s (%s).", totals(l, out.Totals), l.count(len(out.Expenses), nExpense)))
	return b.String()
}

// expenseWords names an expense as a proposal or an answer shows it:
// "coffee, £3.00 on 2026-11-20 (food)".
func expenseWords(l lang, e contracts.ExpenseView) string {
	return l.sayf("%s, %s on %s%s", "%s, %s le %s%s", quote(e.Item), l.money(e.Amount), l.date(e.Date), categorySuffix(e.Category))
}

// noExpense answers a lookup of a number with no expense, naming the
// expenses whose numbers are closest.
func noExpense(l lang, out contracts.ExpenseList) string {
	msg := l.sayf("There is no expense #%d.", "Il n'y a pas de dépense #%d.", out.ID)
	if len(out.Nearby) == 0 {
		return msg + l.say(" You have no expenses yet.", " Vous n'avez encore aucune dépense.")
	}
	near := make([]string, len(out.Nearby))
	for i, e := range out.Nearby {
		near[i] = fmt.Sprintf("#%d %s", e.ID, expenseWords(l, e))
	}
	return msg + l.say(" The nearest numbers are: ", " Les numéros les plus proches : ") + strings.Join(near, "; ") + "."
}

func describeMail(l lang, data json.RawMessage) string {
	var out contracts.MailSearch
	if json.Unmarshal(data, &out) != nil || len(out.Messages) == 0 {
		return l.say("I couldn't find a matching statement in your mail.", "Je n'ai trouvé aucun relevé correspondant dans vos e-mails.")
	}
	var b strings.Builder
	b.WriteString(l.say("I found these messages:\n", "J'ai trouvé ces messages :\n"))
	for _, m := range out.Messages {
		att := l.say("no attachments", "aucune pièce jointe")
		if len(m.Attachments) > 0 {
			att = strings.Join(quoteAll(m.Attachments), ", ")
		}
		b.WriteString(l.sayf("- %s, \"%s\" from %s (%s)\n", "- %s, « %s » de %s (%s)\n", l.day(m.Date), quote(m.Subject), quote(m.From), att))
	}
	b.WriteString(l.say("Say \"import the first one\" to process its statement.", "Dites « importe le premier » pour traiter son relevé."))
	return b.String()
}

func describeFetch(l lang, data json.RawMessage) string {
	var out contracts.AttachmentsFetched
	_ = json.Unmarshal(data, &out)
	var queued, dup []string
	for _, d := range out.Documents {
		if d.Status == "duplicate" {
			dup = append(dup, quote(d.Filename))
		} else {
			queued = append(queued, quote(d.Filename))
		}
	}
	var parts []string
	if len(queued) > 0 {
		parts = append(parts, l.sayf("I'm importing %s; you'll get a notification when it's done.", "J'importe %s ; vous recevrez une notification une fois l'import terminé.",
			strings.Join(queued, ", ")))
	}
	if len(dup) > 0 {
		parts = append(parts, alreadyImported(l, strings.Join(dup, ", ")))
	}
	if len(parts) == 0 {
		return l.say("That message has no statement attachments to import.", "Ce message n'a aucun relevé en pièce jointe à importer.")
	}
	return strings.Join(parts, " ")
}

// alreadyImported says that names (quoted) were imported before.
func alreadyImported(l lang, names string) string {
	return l.sayf("%s was already imported, so nothing new was added from it.", "%s a déjà été importé : rien de nouveau n'a été ajouté.", names)
}

func describeImports(l lang, data json.RawMessage) string {
	var out contracts.RecentImports
	_ = json.Unmarshal(data, &out)
	if len(out.Imports) == 0 {
		return l.say("You haven't imported any statements recently.", "Vous n'avez importé aucun relevé récemment.")
	}
	var b strings.Builder
	if len(out.Imports) == 1 {
		b.WriteString(l.say("Your most recent import: ", "Votre dernier import : "))
	} else {
		b.WriteString(l.say("Your recent imports:\n", "Vos imports récents :\n"))
	}
	for _, im := range out.Imports {
		line := l.sayf("%s on %s: ", "%s le %s : ", quote(im.Filename), l.day(im.CreatedAt))
		switch im.Status {
		case "imported":
			line += l.count(im.Imported, nTransaction) + " " + l.word(im.Imported, noun{"imported", "imported", "importée", "importées"})
		case "failed":
			line += l.say("failed (", "échec (") + quote(im.Detail) + ")"
		default:
			line += l.say("still importing", "import en cours")
		}
		if len(out.Imports) > 1 {
			line = "- " + line
		}
		b.WriteString(line + "\n")
	}
	return strings.TrimSpace(b.String()) + "."
}

func describeTransactions(l lang, data json.RawMessage) string {
	var out contracts.TransactionList
	_ = json.Unmarshal(data, &out)
	if out.ID != 0 && len(out.Transactions) == 0 {
		return noTransaction(l, out)
	}
	if len(out.Transactions) == 0 {
		return l.say("I found no matching transactions.", "Je n'ai trouvé aucune transaction correspondante.")
	}
	txs := append([]contracts.TransactionView(nil), out.Transactions...)
	sort.SliceStable(txs, func(i, j int) bool { return txs[i].Date < txs[j].Date })
	var b strings.Builder
	b.WriteString(l.count(out.Count, nTransaction) + l.say(":\n", " :\n"))
	for _, t := range txs {
		flag := ""
		if t.ReviewStatus == "needs_review" {
			flag = l.say(" [needs review]", " [à vérifier]")
		}
		num := ""
		if t.ID != 0 {
			num = fmt.Sprintf("#%d ", t.ID)
		}
		fmt.Fprintf(&b, "- %s%s %s, %s%s\n", num, l.date(t.Date), quote(t.Description), l.money(t.Amount), flag)
	}
	if len(txs) < out.Count {
		b.WriteString(l.sayf("(showing %d of %d)\n", "(affichage : %d sur %d)\n", len(txs), out.Count))
	}
	b.WriteString(l.sayf("Total: %s.", "Total : %s.", totals(l, out.Totals)))
	return b.String()
}

// describePreferences lists a user's defaults that are set: "currency EUR,
// time zone Europe/Paris, dates written day first".
func describePreferences(l lang, p contracts.Preferences) string {
	var parts []string
	if p.Currency != "" {
		parts = append(parts, l.say("currency ", "devise ")+p.Currency)
	}
	if p.Timezone != "" {
		parts = append(parts, l.say("time zone ", "fuseau horaire ")+p.Timezone)
	}
	if p.DateOrder != "" {
		parts = append(parts, map[string]phrase{"dmy": {"dates written day first", "dates au format jour/mois/année"},
			"mdy": {"dates written month first", "dates au format mois/jour/année"}, "ymd": {"dates written year first", "dates au format année/mois/jour"}}[p.DateOrder].in(l))
	}
	if p.Language != "" {
		parts = append(parts, map[string]phrase{"en": {"answers in English", "réponses en anglais (English)"},
			"fr": {"answers in French (français)", "réponses en français"}}[p.Language].in(l))
	}
	return strings.Join(parts, ", ")
}
