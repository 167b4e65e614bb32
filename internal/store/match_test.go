package store_test

import (
	"testing"

	"github.com/purser-ai/purser/internal/store"
)

func TestCompatibleDescriptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typed, bank string
		want        bool
	}{
		{"coffee at Costa", "CARD PAYMENT TO COSTA COFFEE 1234 LONDON", true},
		{"Café Nero", "POS CAFE NERO 00423", true},
		{"sainsbury", "SAINSBURYS S/MKTS", true},
		{"groceries tesco", "Tesco Stores 3312", true},
		{"lunch", "PRET A MANGER", false},
		{"taxi", "CARD PAYMENT 1234", false},
		{"card payment", "CARD PAYMENT TO UBER", false},
		{"tea", "TEAPOT EMPORIUM", false},
		{"", "TESCO", false},
		{"Müller yoghurt", "MULLER DAIRY", true},
	}
	for _, tt := range tests {
		if got := store.CompatibleDescriptions(tt.typed, tt.bank); got != tt.want {
			t.Errorf("CompatibleDescriptions(%q, %q) = %v, want %v", tt.typed, tt.bank, got, tt.want)
		}
	}
}
