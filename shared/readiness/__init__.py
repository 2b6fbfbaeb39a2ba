"""The readiness checklist: the causes of the platform's refusals, found before anything is sent."""
