"""Publish advert and Generate campaign with audience (docs/service-contract.md §1, §4.6, §4.7, §8):
from an active audience to a paused Sales campaign, ad set, creative and ad on the platform, or to a
link into the platform's ads manager. ``PublishingService`` serves the API route and the activation
state machine alike."""
