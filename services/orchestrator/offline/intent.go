package offline

import (
	"encoding/json"
	"strings"
	"time"
	"unicode"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// The intent comes before the numbers. A question ("how many coffees in
// the last 30 days?", "is 2024 my best year?"), a search ("find my Costco
// receipts from 2020"), a look back at the conversation ("what did I say
// about my landlord?") or a note ("remember pineapple 42") holds numbers
// that are years, counts and days: only a request to add or change reads
// a number as an amount. What reads as none of the intents is asked
// about, never proposed.

var (
	// questionRe is a question by its form: a question mark, or the
	// words a question starts with. A polite request ("can you add £5
	// lunch?") is not one: see requestRe.
	questionRe = mustCompile(`(?i)\?\s*$|^(?:so\s+|and\s+|but\s+|hey\s*,?\s+|ok\s*,?\s+)?(?:how|what|what's|whats|which|when|where|why|who|whom|whose|is|are|was|were|am|do|does|did|have|has|had|can i|could i|should|shall|will|would|may|isn't|aren't|didn't|don't|doesn't|haven't|combien|quel|quelle|quels|quelles|qu'est-ce|est-ce|où|quand|pourquoi|ai-je|as-tu)\b`)
	// requestRe is a polite request to change something, which a
	// question mark does not make a question.
	requestRe = mustCompile(`(?i)^(?:please\s+)?(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?(?:add|log|record|put down|note down|enter|change|update|edit|fix|correct|delete|remove|set|make)\b`)
	// otherVerbRe starts a request that is not an expense to add: what
	// follows it is a name, a note or a search, never an amount.
	otherVerbRe = mustCompile(`(?i)^(?:please\s+|hey\s*,?\s+|ok\s*,?\s+)?(?:remember|note that|don't forget|do not forget|find|search|look\s+(?:up|for)|locate|dig up|pull up|fetch me|get me|tell me|remind me|explain|compare|forecast|predict|estimate|calculate|count|convert|translate|call me|text me|ring me|email me|message me|wake me|meet me|remind me|cherche|trouve|rappelle|souviens)\b`)
	// historyRe asks about the conversation itself.
	historyRe = mustCompile(`(?i)\bwhat\s+(?:did|have)\s+(?:i|we)\s+(?:say|said|tell|told|mention|mentioned|write|wrote|type|typed|ask|asked)\b|\bdid\s+i\s+(?:ever\s+)?(?:say|tell|mention|write)\b|\bwhat\s+did\s+you\s+(?:say|tell me|answer|reply|suggest)\b|\b(?:earlier|before|previously|last time)\s+(?:i|you|we)\s+(?:said|mentioned|told|talked|wrote|asked)\b|\bremind\s+me\s+what\s+(?:i|you|we)\b|\b(?:our|this|the)\s+(?:chat|conversation)\s+(?:history|about|log)\b|\bscroll\s+back\b|\bwhat\s+(?:was|were)\s+(?:we|i)\s+(?:talking|saying)\b|\bqu'est-ce\s+que\s+j'ai\s+dit\b|\bqu'ai-je\s+dit\b|\bj'ai\s+dit\s+quoi\b`)
	// aboutRe finds what a look back is about.
	aboutRe = mustCompile(`(?i)\b(?:about|regarding|concerning|on the subject of|sur|à propos d[eu]|au sujet d[eu])\s+(.+)$`)
	// searchRe asks to find documents or entries by words.
	searchRe = mustCompile(`(?i)^(?:please\s+|can you\s+|could you\s+)?(?:find|search(?:\s+for)?|look\s+(?:up|for)|locate|dig up|pull up|where(?:'s|\s+is|\s+are)|cherche|trouve)\b\s*(.*)$`)
	// noteRe is a note to keep, which purser does not keep apart from
	// the conversation.
	noteRe = mustCompile(`(?i)^(?:please\s+)?(?:remember|note that|make a note|don't forget|do not forget|keep in mind|souviens-toi|rappelle-toi)\b\s*(?:that\s+)?(.*)$`)
	// bestWorstRe compares periods, which no tool ranks yet.
	bestWorstRe = mustCompile(`(?i)\b(?:cheaper|dearer|more expensive|better|worse|pricier)\s+than\b|\b(?:best|worst|cheapest|most expensive|priciest|record)\s+(?:year|month|week|quarter)\b|\b(?:year|month)\s+(?:on|over)\s+year\b`)
	// countRe asks how many times something was bought or done; what
	// follows is the thing, then the dates.
	countRe = mustCompile(`(?i)^(?:so\s+|and\s+)?how\s+(?:many|often)\s+(?:times\s+)?(.*)$`)
	// countVerbRe is the verb of a count, before or after the thing:
	// "did I buy coffee", "coffees did I buy".
	countVerbRe = mustCompile(`(?i)\b(?:did|have|do|has)\s+(?:i|we)\s+(?:ever\s+)?(?:been\s+)?(?:buy|bought|get|got|order|ordered|pay(?:\s+for)?|paid(?:\s+for)?|have|had|go(?:\s+to)?|gone(?:\s+to)?|went(?:\s+to)?|visit(?:ed)?|eat(?:\s+at)?|eaten(?:\s+at)?|shop(?:ped)?(?:\s+at)?|use|used|spend(?:\s+(?:on|at))?|spent(?:\s+(?:on|at))?|take|took|grab(?:bed)?)\b(?:\s+(?:to|at|on|for))?`)
	// countEnd cuts the thing where the dates begin.
	countEnd = mustCompile(`(?i)\s+(?:in|this|last|since|over|during|from|between|so far|until|before|after|per|each|every|the past|ever|yesterday|today)\b.*$`)
	// notSpendingRe is money that is not spent: owed, lent, moved
	// between the person's own accounts.
	notSpendingRe = mustCompile(`(?i)\b(?:owes?|owed|lent|lend|borrow(?:ed)?|loan(?:ed)?)\b|\b(?:transfer(?:red)?|moved?|put)\b.*\b(?:savings|isa|pot|current account|my account|other account)\b|\btransfer(?:red)?\s+\S+\s+(?:to|from|into)\b|\bvirement\b`)
	// pickRe is a choice or a place in a list, not a purchase: "page 2".
	pickRe = mustCompile(`(?i)^(?:page|option|number|no\.?|item|step|room|chapter|line|question|choice|level|table|row|the)\s*#?\d+[.!]?$`)
	// lastChangeRe asks what the last change was.
	lastChangeRe = mustCompile(`(?i)\b(?:what\s+(?:was|is)|show(?:\s+me)?)\s+(?:my|the)\s+(?:last|latest|most recent)\s+(?:change|edit)\b`)
	// boughtRe asks what was bought: the ledger as a list.
	boughtRe = mustCompile(`(?i)^what\s+(?:did|have)\s+(?:i|we)\s+(?:buy|bought|get|got|order|ordered|pay for|paid for)\b`)
	// searchYearRe is a year a search names: "from 2020".
	searchYearRe = mustCompile(`(?i)\b(?:from|in|of|during|for)\s+((?:19|20)\d{2})\b`)
	// chitChatRe is talk that asks nothing of the ledger.
	chitChatRe = mustCompile(`(?i)^(?:thanks|thank you|thx|cheers|ta|great|cool|nice|awesome|perfect|lol|haha|ok|okay|alright|good|bye|goodbye|see you|merci|super|parfait|d'accord|au revoir)\b[\s!.,]*(?:you|so much|a lot|again|beaucoup)?[\s!.]*$`)
	// whoRe asks about the assistant itself.
	whoRe = mustCompile(`(?i)^(?:who|what)\s+are\s+you\b|^how\s+are\s+you\b|^are\s+you\s+(?:a\s+)?(?:bot|human|real|person|robot|an? ai)\b|^what'?s\s+your\s+name\b|^qui\s+es-tu\b|^comment\s+(?:vas-tu|ça va|ca va)\b`)
	// aboutMeRe is something the person tells about their life: the
	// conversation keeps it, and a number in it is not an amount.
	aboutMeRe = mustCompile(`(?i)^(?:my|our)\s+([a-z][a-z'-]*)(?:\s+[a-z][a-z'-]*)?\s+(?:is|are|was|were|lives|works|called|named|has|have|'s)\b|^(?:i|we)\s+(?:have|live|work|am|'m|was|were|own|moved|got married|had)\b|^(?:mon|ma|mes|notre)\s+([a-zéèàç'-]+)\s+(?:est|sont|s'appelle|habite)\b`)
)

// isQuestion reports whether text asks rather than tells.
// elsewhere reads the few requests no other reader takes: the last
// change, and what was bought.
func elsewhere(text string, now time.Time) (orchestrator.Decision, bool) {
	switch {
	case lastChangeRe.MatchString(text):
		return call(contracts.ToolGetLastChange, contracts.GetLastChangeArgs{}), true
	case boughtRe.MatchString(text):
		r := rangeOf(text, now)
		return call(contracts.ToolListLedger, contracts.ListLedgerArgs{Range: &r}), true
	}
	return orchestrator.Decision{}, false
}

func isQuestion(text string) bool {
	return questionRe.MatchString(text) && !requestRe.MatchString(text)
}

// historyLookup reads a question about what was said earlier: the words
// it is about go to get_chat_history.
func historyLookup(text string) (orchestrator.Decision, bool) {
	if !historyRe.MatchString(text) {
		return orchestrator.Decision{}, false
	}
	q := historyWords(text)
	args := contracts.GetChatHistoryArgs{}
	if q != "" {
		args.Query = &q
	}
	return call(contracts.ToolGetChatHistory, args), true
}

// historyWords are the words a look back searches for: what follows
// "about", else the words that are not the question's own.
func historyWords(text string) string {
	words := text
	if m := aboutRe.FindStringSubmatch(text); m != nil {
		words = m[1]
	} else {
		words = historyRe.ReplaceAllString(text, " ")
	}
	var keep []string
	for _, w := range strings.Fields(strings.ToLower(words)) {
		w = strings.Trim(w, "?.!,;:\"'()")
		w = strings.TrimPrefix(strings.TrimPrefix(w, "l'"), "d'")
		if w == "" || stopWords[w] {
			continue
		}
		keep = append(keep, w)
	}
	if len(keep) > 4 {
		keep = keep[:4]
	}
	return strings.Join(keep, " ")
}

// stopWords are the words of a question that name nothing to look for.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "my": true, "our": true, "your": true, "me": true, "i": true, "you": true, "we": true,
	"it": true, "that": true, "this": true, "those": true, "these": true, "about": true, "earlier": true, "before": true,
	"previously": true, "again": true, "last": true, "time": true, "ago": true, "to": true, "of": true, "on": true, "in": true,
	"for": true, "with": true, "was": true, "were": true, "is": true, "are": true, "did": true, "do": true, "what": true,
	"when": true, "said": true, "say": true, "mentioned": true, "told": true, "ever": true, "anything": true, "something": true,
	"please": true, "chat": true, "conversation": true, "history": true, "back": true, "just": true, "so": true, "far": true,
	"mon": true, "ma": true, "mes": true, "le": true, "la": true, "les": true, "de": true, "du": true, "des": true, "un": true,
	"une": true, "plus": true, "tôt": true, "avant": true, "dit": true, "quoi": true, "propos": true,
}

// searchLookup reads "find my Costco receipts from 2020": a search of
// the ledger by the words it names, over the dates it names (every date
// when it names none). The number in it is a year, never an amount.
func searchLookup(text string, now time.Time) (orchestrator.Decision, bool) {
	if searchWhere.MatchString(clean(text)) {
		return searchIntent(text) // "where did I pay the tax office"
	}
	m := searchRe.FindStringSubmatch(text)
	if m == nil || mailRe.MatchString(text) || strings.Contains(strings.ToLower(text), "statement") {
		return orchestrator.Decision{}, false
	}
	r := shopRange(text, now)
	if y := searchYearRe.FindStringSubmatch(text); y != nil && r == "all_time" {
		r = y[1]
	}
	words := searchWords(m[1], now)
	if words == "" {
		return clarify("What should I look for? Name a shop, an item or a word from the description."), true
	}
	// The search tool finds entries, receipts, statements and messages by
	// their words, with citations, over all time or a year; a finer range
	// ("last month", "since January") is the ledger's list of those dates.
	switch {
	case r == "all_time":
		return call(contracts.ToolSearch, contracts.SearchArgs{Query: words}), true
	case len(r) == 4 && contracts.ValidRange(r):
		from, to := r+"-01-01", r+"-12-31"
		return call(contracts.ToolSearch, contracts.SearchArgs{Query: words, From: &from, To: &to}), true
	}
	return call(contracts.ToolListLedger, contracts.ListLedgerArgs{Range: &r, Query: &words}), true
}

// searchWords keeps the name a search is for: "my Costco receipts from
// 2020" is "costco". Names written with capitals are kept on their own
// ("Amazon orders" is "amazon"); otherwise every word that is not about
// dates or the kind of thing looked for.
func searchWords(s string, now time.Time) string {
	_, rest, _ := findDate(s, now)
	rest = yearWords.ReplaceAllString(rest, " ")
	var keep, names []string
	for _, w := range strings.Fields(rest) {
		w = strings.Trim(w, "?.!,;:\"()")
		lw := strings.ToLower(w)
		if lw == "" || stopWords[lw] || searchNoise[lw] || rangeNoise[lw] || allDigits(lw) || monthOnly(lw) {
			continue
		}
		keep = append(keep, lw)
		if r := []rune(w); len(r) > 0 && unicode.IsUpper(r[0]) && lw != "i" {
			names = append(names, lw)
		}
	}
	if len(names) > 0 {
		return strings.Join(names, " ")
	}
	return strings.Join(keep, " ")
}

// rangeNoise are the words of a date phrase.
var rangeNoise = map[string]bool{"last": true, "this": true, "next": true, "past": true, "month": true, "months": true, "year": true,
	"years": true, "week": true, "weeks": true, "days": true, "today": true, "yesterday": true, "since": true, "between": true,
	"and": true, "until": true, "ago": true, "quarter": true, "during": true, "over": true}

// searchNoise are the words that say what kind of thing is searched for,
// not which.
var searchNoise = map[string]bool{
	"receipt": true, "receipts": true, "invoice": true, "invoices": true, "bill": true, "bills": true, "payment": true,
	"payments": true, "purchase": true, "purchases": true, "transaction": true, "transactions": true, "expense": true,
	"expenses": true, "entry": true, "entries": true, "stuff": true, "things": true, "all": true, "any": true, "every": true,
	"from": true, "at": true, "where": true, "is": true, "are": true, "for": true, "reçu": true, "reçus": true, "facture": true,
	"factures": true, "tickets": true, "ticket": true,
}

// note answers a note to keep: the conversation keeps it, and a number
// in it is not taken for an expense.
func note(text string, now time.Time) (orchestrator.Decision, bool) {
	m := noteRe.FindStringSubmatch(text)
	if m == nil && aboutMeRe.MatchString(text) && !addRe.MatchString(text) && !spendRe.MatchString(text) {
		if len(findAmounts(withoutDate(withoutClock(text), now))) > 0 {
			return clarify("Is that an expense to add? If so, say \"add\" with the item and the amount, e.g. \"add lunch 12.50\"."), true
		}
		return answer("Noted: our conversation keeps it, so ask me \"what did I say about " + topic(text) + "?\" whenever you need it."), true
	}
	if m == nil {
		return orchestrator.Decision{}, false
	}
	what := strings.TrimSpace(strings.TrimRight(m[1], ".!"))
	if what == "" {
		return clarify("What should I remember?"), true
	}
	return answer("Noted: our conversation keeps it, so ask me \"what did I say about " + topic(what) +
		"?\" whenever you need it. I haven't added anything to your expenses; if it is one, say \"add " + what + "\"."), true
}

// topic is the word a note is about: its first word that names
// something ("my landlord is …" is about the landlord).
func topic(s string) string {
	for _, w := range strings.Fields(strings.ToLower(s)) {
		w = strings.Trim(w, "?.!,;:")
		if w != "" && !stopWords[w] && !pronounWords[w] {
			return w
		}
	}
	return "it"
}

var pronounWords = map[string]bool{"he": true, "she": true, "they": true, "his": true, "her": true, "their": true, "its": true, "there": true}

// countLookup reads "how many coffees did I buy in the last 30 days?": a
// total over what the words name, which counts the entries too.
func countLookup(text string, now time.Time) (orchestrator.Decision, bool) {
	m := countRe.FindStringSubmatch(strings.TrimRight(text, "?!. "))
	if m == nil {
		return orchestrator.Decision{}, false
	}
	what := strings.TrimSpace(countVerbRe.ReplaceAllString(" "+m[1]+" ", " "))
	what = strings.TrimSpace(countEnd.ReplaceAllString(what, ""))
	var keep []string
	for _, w := range strings.Fields(strings.ToLower(what)) {
		if !stopWords[w] && w != "times" && w != "things" && w != "items" {
			keep = append(keep, w)
		}
	}
	r := shopRange(text, now)
	args := contracts.GetBalanceArgs{Range: &r}
	if len(keep) > 0 {
		q := singular(strings.Join(keep, " "))
		args.Query = &q
	}
	return call(contracts.ToolGetBalance, args), true
}

// singular is a plural word of a count as the ledger names one entry:
// "coffees" → "coffee".
func singular(w string) string {
	switch {
	case strings.HasSuffix(w, "'s") || strings.HasSuffix(w, "s'"):
		return w
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ss"):
		return w
	case strings.HasSuffix(w, "s") && len(w) > 3:
		return w[:len(w)-1]
	}
	return w
}

// unsure is what a message that reads as no intent gets: a question, so
// that nothing is guessed. A number in it is asked about, never added.
// asks is whether it is a question (isQuestion).
func unsure(text string, now time.Time, asks bool) orchestrator.Decision {
	switch {
	case notSpendingRe.MatchString(text):
		return clarify("Money owed, lent or moved between your own accounts isn't spending, so I haven't added it. If it was a purchase, say \"add\" with the item and the amount.")
	case pickRe.MatchString(text):
		return clarify("Which do you mean? Tell me what you'd like to do, e.g. \"list my expenses\" or \"add lunch 12.50\".")
	case bestWorstRe.MatchString(text):
		return clarify("I can't rank years or months yet. I can total any period for you (\"what did I spend in 2024?\") or show spending month by month (\"compare my spending month by month this year\"). Which would help?")
	case chitChatRe.MatchString(text):
		return answer("You're welcome! " + shortHelp)
	case whoRe.MatchString(text):
		return answer("I'm purser, your money assistant: I keep track of what you spend. " + shortHelp)
	case asks && hasDigit(text):
		return clarify("I'm not sure what you'd like to know. I can total or list your spending, show it by category, shop or month, or find entries by name (\"find my Tesco payments\"). Could you put the question another way?")
	case len(findAmounts(withoutDate(withoutClock(text), now))) > 0:
		return clarify("Is that an expense to add? If so, say \"add\" with the item and the amount, e.g. \"add lunch 12.50\".")
	}
	return answer("I'm not sure how to help with that. " + helpText)
}

// shortHelp is the one line that says what to try next.
const shortHelp = "Ask me what you spent, or tell me what you bought (\"I spent £12.50 on lunch\")."

// historyFound answers a look back from what get_chat_history found: the
// person's own earlier messages on the subject, newest last, leaving out
// the question itself and other look backs.
func historyFound(p orchestrator.Prompt, last orchestrator.StepRecord) (orchestrator.Decision, bool) {
	if last.Tool != contracts.ToolGetChatHistory || !last.OK {
		return orchestrator.Decision{}, false
	}
	var out contracts.ChatHistory
	if json.Unmarshal(last.Data, &out) != nil {
		return orchestrator.Decision{}, false
	}
	var said []string
	for _, m := range out.Messages {
		t := clean(m.Text)
		if m.Role != "user" || t == clean(p.Text) || historyRe.MatchString(fromFrench(t)) {
			continue
		}
		said = append(said, "“"+contracts.QuoteText(t)+"”")
	}
	fr := isFrench(p)
	switch {
	case len(said) == 0 && fr:
		return answer("Je ne trouve rien à ce sujet dans notre conversation."), true
	case len(said) == 0:
		return answer("I can't find anything about that in our conversation."), true
	case fr:
		return answer("Vous avez dit : " + strings.Join(said, " ; ")), true
	}
	return answer("You said: " + strings.Join(said, "; ")), true
}
