// SPDX-License-Identifier: GPL-2.0
/* budgettext.c - what alloc's time windows cost, in words (budgettext.h). */
#include "sink/budgettext.h"

void budgettext_loss(FILE *f, double loss)
{
	/* under 0.005 %: "0.00%" would read as a measured nothing */
	if (loss >= 0.00005)
		fprintf(f, "; the windows cost the busiest thread %.2f%% of its time, as measured "
			"from its own allocation counter", 100 * loss);
	else
		fprintf(f, "; the windows cost the busiest thread too little for its own "
			"allocation counter to measure (its pace varies more than they slow it)");
}
