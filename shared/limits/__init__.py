"""Fair shares between organizations (issue 25, item 4): per-organization limits on the expensive
dashboard actions, so one organization's burst cannot take the capacity another's predictions need."""
