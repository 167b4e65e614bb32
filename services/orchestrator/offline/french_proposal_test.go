package offline

import "testing"

// TestFrenchProposalReadBack: a proposal a French speaker was shown reads
// back as the English one, so that "no, 14" corrects it in French too.
func TestFrenchProposalReadBack(t *testing.T) {
	tests := []struct{ give, want string }{
		{"Proposed: Ajouter la dépense « déjeuner » de 1\u202f234,50\u00a0€ le 22/11/2026 dans la catégorie repas ?",
			"Proposed: Add expense 'déjeuner' €1234.50 on 2026-11-22 in repas?"},
		{"Proposed: Ajouter la dépense « thé » de 3\u00a0KWD ?", "Proposed: Add expense 'thé' 3 KWD?"},
		{"Proposed: Modifier la dépense #7 (croissant, 12,50\u00a0€ le 22/11/2026) : libellé « croissant » → « pain », montant 12,50\u00a0€ → 14,00\u00a0€, date 22/11/2026 → 21/11/2026, catégorie alimentation → courses ?",
			"Proposed: Change expense #7 (croissant, €12.50 on 2026-11-22): item 'croissant' → 'pain', amount €12.50 → €14.00, date 2026-11-22 → 2026-11-21, category alimentation → courses?"},
		{"Proposed: Supprimer la dépense #7 : croissant, 12,50\u00a0€ le 22/11/2026 ?", "Proposed: Delete expense #7: croissant, €12.50 on 2026-11-22?"},
		{"Proposed: Add expense 'lunch' £12.50 on 2026-11-22?", "Proposed: Add expense 'lunch' £12.50 on 2026-11-22?"},
		{"Que faut-il changer ?", "Que faut-il changer ?"},
	}
	for _, tt := range tests {
		if got := englishProposal(tt.give); got != tt.want {
			t.Errorf("englishProposal(%q)\n got %q\nwant %q", tt.give, got, tt.want)
		}
	}
}
