package app

import (
	"strings"
	"testing"
)

// The chat speaks English or French, by a switch in its header that a
// finger can hit: switched, its own words change at once (the status,
// the message box, the proposal's buttons and its expiry, the decision),
// and the choice survives a reload. A French expense and a French
// question about this month's spending are answered in French, the money
// written the French way; switched back, the same cards read in English.
func TestWidgetSpeaksFrenchAndRemembersIt(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	b := startBrowser(t)
	b.open("http://" + info.HTTPAddr + "/#token=" + info.DemoToken)
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.click("#launcher")

	if got := b.texts("#lang-button"); len(got) != 1 || got[0] != "FR" {
		t.Errorf("the English chat's language switch reads %q, want FR", got)
	}
	if label := b.eval(`return document.getElementById("lang-button").getAttribute("aria-label")`); label != "Français" {
		t.Errorf("the language switch is labelled %q", label)
	}
	b.click("#lang-button")
	b.waitExact("#status", "connecté")
	for _, c := range []struct{ what, js, want string }{
		{"the page's language", `return document.documentElement.lang`, "fr"},
		{"the switch", `return document.getElementById("lang-button").textContent`, "EN"},
		{"the message box", `return document.getElementById("message").placeholder`, "Demandez, ou dites : j'ai dépensé 3,50 € pour un café"},
		{"the hint", `return document.getElementById("composer-hint").textContent`, "Entrée envoie · Maj+Entrée ajoute une ligne"},
		{"the paperclip", `return document.getElementById("attach-button").getAttribute("aria-label")`, "Joindre un relevé ou un reçu"},
		{"the empty chat", `return getComputedStyle(document.getElementById("transcript"), "::before").content`, `"Posez une question`},
	} {
		if got := b.eval(c.js); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s reads %q after switching to French, want %q", c.what, got, c.want)
		}
	}
	b.shot("01-french-empty")

	// The choice outlives the page.
	b.reload()
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connecté")
	b.click("#launcher")
	if lang := b.eval(`return document.documentElement.lang`); lang != "fr" {
		t.Errorf("after a reload the chat is in %q", lang)
	}
	// It is the person's setting, not only this browser's: with the
	// browser's memory gone (another device), the chat comes back in French.
	b.eval(`localStorage.clear(); return ""`)
	b.reload()
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connecté")
	b.click("#launcher")

	say(b, "j'ai dépensé 1234,56 € pour un vélo")
	b.waitText("#transcript > li.proposal", "vélo")
	if got := b.texts(`#transcript > li.proposal button[data-decision]`); strings.Join(got, "|") != "Approuver|Modifier|Refuser" {
		t.Errorf("the proposal's buttons read %q", got)
	}
	b.waitText("#transcript > li.proposal time.expires", "Expire dans 23 h")
	b.shot("02-french-proposal")
	b.click(`#transcript > li.proposal button[data-decision="approve"]`)
	b.waitText("#transcript > li.proposal .decided", "Approuvée")
	b.waitText(replies, "vélo")

	say(b, "combien ai-je dépensé ce mois-ci ?")
	answer := b.waitText(replies, "Vous avez dépensé")
	if !strings.Contains(answer, "1\u202f234,56\u00a0€") || !strings.Contains(answer, "ce mois-ci") {
		t.Errorf("the French answer is %q, want 1 234,56 € this month", answer)
	}
	b.shot("03-french-answer")

	b.click("#lang-button")
	b.waitExact("#status", "connected")
	b.waitText("#transcript > li.proposal .decided", "Approved")
	if got := b.texts("#lang-button"); len(got) != 1 || got[0] != "FR" {
		t.Errorf("back in English the switch reads %q", got)
	}
}

// On a phone (375×667), in the dark, the language switch is a 44-pixel
// target inside the header, and the header keeps every button on the
// screen in French, whose words are longer. A turn proposing two brings
// Tout approuver, a 44-pixel target on the screen above the message box.
func TestWidgetLanguageSwitchOnAPhone(t *testing.T) {
	t.Parallel()
	info, model := startWithModel(t)
	b := startBrowser(t)
	b.windowSize(375, 667)
	b.open("http://" + info.HTTPAddr + "/#token=" + info.DemoToken)
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.click("#launcher")
	b.top()
	b.waitFor("a full-screen chat", func() bool {
		return b.eval(`const r = document.getElementById("purser-widget").getBoundingClientRect(); const e = document.documentElement; return r.width === e.clientWidth && r.height === e.clientHeight`) == "true"
	})
	b.intoFrame("#purser-widget")
	b.click("#lang-button")
	b.waitExact("#status", "connecté")
	if r := b.eval(`const r = document.getElementById("lang-button").getBoundingClientRect(); return r.width >= 44 && r.height >= 44`); r != "true" {
		t.Errorf("the language switch is not a 44 px target: %s", b.eval(`return JSON.stringify(document.getElementById("lang-button").getBoundingClientRect())`))
	}
	if off := b.eval(`return [...document.querySelectorAll("#bar button")].filter(x => x.offsetParent && (x.getBoundingClientRect().right > innerWidth || x.getBoundingClientRect().left < 0)).map(x => x.id).join(",")`); off != "" {
		t.Errorf("header buttons off the screen: %s", off)
	}
	b.shot("01-phone-french")

	b.prefersDark(true)
	model.Push(addsAll("déjeuner", "café"))
	say(b, "déjeuner et café")
	b.waitText("#transcript > li.proposal", "café")
	b.waitExact("#approve-all", "Tout approuver (2)")
	if r := b.eval(`const r = document.getElementById("approve-all").getBoundingClientRect(); return r.height >= 44 && r.left >= 0 && r.right <= innerWidth && r.bottom <= innerHeight`); r != "true" {
		t.Errorf("Tout approuver is not a 44 px target on the screen: %s", b.eval(`return JSON.stringify(document.getElementById("approve-all").getBoundingClientRect())`))
	}
	b.waitText("#transcript > li.proposal time.expires", "Expire dans 23 h")
	b.shot("02-phone-dark-approve-all")
}
