"""The script the merchant pastes into the shop's pages (issue 21, item 3), shown on the Events page.

It defines ``shopEvent(name, data, eventId)``: the page calls it where it would call the pixel's
``fbq('track', name, data)``. It gives the browser pixel (when the page has one) and the site events
endpoint the same event with the same id (``eventID`` / ``eventId``), so the platform keeps one of the
two (docs/platform-notes.md §11.8); a purchase passes its order id, other events get a random one. It
sends the page's address and its ``_fbp`` and ``_fbc`` cookies as they are (an ``_fbc`` made from the
address's ``fbclid`` when the cookie is not set yet, the click id's case kept), never an identifier of
the shopper. The request is a plain text POST with ``keepalive`` (no preflight, and it outlives a page
that is being left); nothing the page does waits for it or sees it fail.
"""

from __future__ import annotations

import json

# Kept short and without dependencies: it runs on every page of the shop.
_SCRIPT = """<script>
(function (w, d) {
  var endpoint = %(endpoint)s;
  function cookie(name) {
    var found = d.cookie.match("(?:^|; )" + name + "=([^;]*)");
    return found ? decodeURIComponent(found[1]) : undefined;
  }
  function clickId() {
    var kept = cookie("_fbc");
    if (kept) return kept;
    var found = /[?&]fbclid=([^&#]+)/.exec(w.location.search);
    return found ? "fb.1." + Date.now() + "." + found[1] : undefined;
  }
  function newId() {
    return w.crypto && w.crypto.randomUUID
      ? w.crypto.randomUUID()
      : Date.now().toString(36) + "-" + Math.random().toString(36).slice(2);
  }
  w.shopEvent = function (name, data, eventId) {
    var event = {
      eventName: name,
      eventId: String(eventId || newId()),
      eventTime: Math.floor(Date.now() / 1000),
      url: w.location.href,
      fbp: cookie("_fbp"),
      fbc: clickId(),
      customData: data || undefined
    };
    if (typeof w.fbq === "function") w.fbq("track", name, data || {}, { eventID: event.eventId });
    try {
      w.fetch(endpoint, {
        method: "POST",
        mode: "cors",
        credentials: "omit",
        keepalive: true,
        headers: { "Content-Type": "text/plain" },
        body: JSON.stringify({ events: [event] })
      }).catch(function () {});
    } catch (ignored) {}
    return event.eventId;
  };
})(window, document);
</script>"""


def site_events_address(endpoint: str, site_key: str) -> str:
    """The address the snippet posts to: the endpoint with the site key as its ``key`` parameter."""
    return f"{endpoint}?key={site_key}"


def snippet(endpoint: str, site_key: str) -> str:
    """The script for the shop's pages, posting to ``endpoint`` under ``site_key``."""
    return _SCRIPT % {"endpoint": json.dumps(site_events_address(endpoint, site_key))}
