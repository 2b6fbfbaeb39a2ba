"""The hosted pages a browser walks (docs/payments-notes.md §2.2, §3.4): the onboarding page an
Account Link opens, which sends the account holder back to ``return_url`` (an expired, used or
unknown link goes to ``refresh_url``), and the payment page of a Checkout Session, which takes the
documented test cards and sends the customer to ``success_url``. No card number is ever stored or
logged: a session keeps each attempt's last four digits and outcome only.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from html import escape

from flask import Blueprint, Response, redirect, request
from flask.typing import ResponseReturnValue

from payments_sandbox import cards, lifecycle
from payments_sandbox.api import current_state
from payments_sandbox.state import PaymentsSandboxState
from payments_sandbox.world import ZERO_DECIMAL, AccountLink, CheckoutSession, SessionStatus

blueprint = Blueprint("pages", __name__)

SYMBOLS = {"usd": "$", "eur": "€", "gbp": "£", "cad": "CA$", "aud": "A$", "jpy": "¥"}
STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}"
    "label{display:block;margin-top:.8rem;font-weight:600}"
    "input[type=text],input[type=email]{display:block;width:100%;padding:.5rem;font-size:1rem;"
    "border:1px solid #6b6b6b;border-radius:4px;box-sizing:border-box}"
    "button{margin-top:1rem;padding:.6rem 1.2rem;font-size:1rem;border-radius:4px;border:1px solid #1a1a1a;"
    "background:#2b2bb8;color:#fff;cursor:pointer}button.secondary{background:#fff;color:#1a1a1a}"
    "[role=alert]{color:#a40000;font-weight:600}table{width:100%;border-collapse:collapse}"
    "td{padding:.3rem 0}td.amount{text-align:right}.checkbox{display:flex;gap:.5rem;align-items:center}"
    ".checkbox label{margin:0;font-weight:400}"
)


def format_amount(amount: int, currency: str) -> str:
    """``$12.34`` for 1234 usd; whole units for zero-decimal currencies."""
    value = f"{amount:,}" if currency in ZERO_DECIMAL else f"{amount / 100:,.2f}"
    symbol = SYMBOLS.get(currency)
    return f"{symbol}{value}" if symbol else f"{value} {currency.upper()}"


def page(title: str, body: str) -> str:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{STYLE}</style></head>'
        f"<body><main>{body}</main></body></html>"
    )


def message_page(title: str, message: str, *, link: tuple[str, str] | None = None) -> str:
    extra = f'<p><a href="{escape(link[0])}">{escape(link[1])}</a></p>' if link else ""
    return page(title, f"<h1>{escape(title)}</h1><p>{escape(message)}</p>{extra}")


# Onboarding (docs/payments-notes.md §2.2) --------------------------------------------------------


@blueprint.route("/setup/s/<account_id>/<token>", methods=["GET"])
def onboarding(account_id: str, token: str) -> ResponseReturnValue:
    """Open the link: once, before it expires; otherwise back to the platform's ``refresh_url``."""
    state = current_state()
    with state.lock:
        link = state.world.account_links.get(token)
        if link is None or link.account_id != account_id:
            return message_page("Link not valid", "This onboarding link is not valid."), 404
        if link.visited or state.now() >= link.expires_at:
            if link.refresh_url:
                return redirect(link.refresh_url, code=302)
            return message_page("Link expired", "This onboarding link has expired or was already used."), 410
        account = state.world.accounts.get(account_id)
        if account is None:
            return message_page("Account closed", "This account no longer exists."), 404
        link.visited = True
        link.form_nonce = secrets.token_urlsafe(18)
        return _onboarding_form(state, link, account.business_name or "", error=None)


@blueprint.route("/setup/s/<account_id>/<token>", methods=["POST"])
def onboarding_submit(account_id: str, token: str) -> ResponseReturnValue:
    """Submit the form the link's page showed: finish onboarding, or leave it for later."""
    state = current_state()
    with state.lock:
        link = state.world.account_links.get(token)
        nonce = request.form.get("nonce", "")
        if (
            link is None
            or link.account_id != account_id
            or link.form_nonce is None
            or link.submitted
            or not secrets.compare_digest(nonce, link.form_nonce)
        ):
            return message_page("Link not valid", "This onboarding form is no longer valid."), 400
        account = state.world.accounts.get(account_id)
        if account is None:
            return message_page("Account closed", "This account no longer exists."), 404
        business_name = request.form.get("business_name", "").strip()
        if request.form.get("decision") == "submit":
            if request.form.get("agree") != "yes" or not business_name:
                error = "Enter the business name and accept the services agreement to continue."
                return _onboarding_form(state, link, business_name, error=error), 400
            lifecycle.complete_onboarding(state, account, business_name)
        link.submitted = True
        if link.return_url:
            return redirect(link.return_url, code=303)
        return message_page("You're all set", "You can close this window and return to the platform.")


def _onboarding_form(
    state: PaymentsSandboxState, link: AccountLink, business_name: str, *, error: str | None
) -> str:
    platform = state.config.platform_name
    alert = f'<p role="alert">{escape(error)}</p>' if error else ""
    return page(
        "Set up payments",
        f"<h1>Set up payments for {escape(platform)}</h1>"
        f"<p>{escape(platform)} uses the payments provider to take card payments for your business. "
        f"Account <code>{escape(link.account_id)}</code> (test mode).</p>{alert}"
        f'<form method="post"><input type="hidden" name="nonce" value="{escape(link.form_nonce or "")}">'
        '<label for="business_name">Business name</label>'
        f'<input type="text" id="business_name" name="business_name" value="{escape(business_name)}" '
        'autocomplete="organization">'
        '<p class="checkbox"><input type="checkbox" id="agree" name="agree" value="yes">'
        '<label for="agree">I agree to the connected account services agreement</label></p>'
        '<button type="submit" name="decision" value="submit">Agree and submit</button> '
        '<button type="submit" name="decision" value="later" class="secondary">Finish later</button>'
        "</form>",
    )


# Checkout (docs/payments-notes.md §3.4) ----------------------------------------------------------


def pay_with_card(
    state: PaymentsSandboxState,
    session: CheckoutSession,
    *,
    number: str,
    expiry: str,
    cvc: str,
    email: str,
    name: str,
) -> cards.CardResult:
    """Try a card on an open session (the Pay button); the caller holds the lock."""
    now = datetime.fromtimestamp(state.now(), UTC)
    result = cards.charge(number, expiry, cvc, now_year=now.year, now_month=now.month)
    last4 = cards.digits(number)[-4:]
    lifecycle.pay(state, session, result, last4=last4, email=email, name=name)
    return result


def after_payment(session: CheckoutSession) -> str:
    """Where the customer goes once the session is paid: ``success_url`` with the session id in."""
    return lifecycle.success_location(session) or f"/c/pay/{session.session_id}"


@blueprint.route("/c/pay/<session_id>", methods=["GET"])
def checkout_page(session_id: str) -> ResponseReturnValue:
    state = current_state()
    with state.lock:
        lifecycle.sweep(state)
        session = state.world.sessions.get(session_id)
        if session is None:
            return message_page("Page not found", "This checkout page does not exist."), 404
        if session.status is not SessionStatus.OPEN:
            return _closed(session)
        return _checkout_form(state, session, error=None, email=session.customer_email or "", name="")


@blueprint.route("/c/pay/<session_id>", methods=["POST"])
def checkout_submit(session_id: str) -> ResponseReturnValue:
    state = current_state()
    form = request.form
    with state.lock:
        lifecycle.sweep(state)
        session = state.world.sessions.get(session_id)
        if session is None:
            return message_page("Page not found", "This checkout page does not exist."), 404
        if session.status is not SessionStatus.OPEN:
            return _closed(session)
        email, name = form.get("email", "").strip(), form.get("name", "").strip()
        if "@" not in email:
            return _checkout_form(
                state, session, error="Your email is incomplete.", email=email, name=name
            ), 400
        result = pay_with_card(
            state,
            session,
            number=form.get("cardnumber", ""),
            expiry=form.get("exp", ""),
            cvc=form.get("cvc", ""),
            email=email,
            name=name,
        )
        if result.outcome is cards.Outcome.SUCCEEDS:
            return redirect(after_payment(session), code=303)
        if result.outcome is cards.Outcome.REQUIRES_AUTHENTICATION:
            return redirect(f"/c/pay/{session_id}/authenticate", code=303)
        return _checkout_form(state, session, error=result.message, email=email, name=name), 402


@blueprint.route("/c/pay/<session_id>/authenticate", methods=["GET", "POST"])
def authenticate(session_id: str) -> ResponseReturnValue:
    """The test 3D Secure challenge: complete it and the payment succeeds, fail it and it is declined."""
    state = current_state()
    with state.lock:
        lifecycle.sweep(state)
        session = state.world.sessions.get(session_id)
        intent = state.world.payment_intents.get(session.payment_intent_id or "") if session else None
        if session is None or intent is None or intent.status != "requires_action":
            return message_page("Nothing to authenticate", "No payment is waiting for authentication."), 404
        if session.status is not SessionStatus.OPEN:
            return _closed(session)
        if request.method == "GET":
            return page(
                "Authenticate your payment",
                "<h1>3D Secure test page</h1>"
                f"<p>Authenticate the payment of {escape(format_amount(intent.amount, intent.currency))} "
                f"with the card ending {escape(intent.card_last4 or '')}.</p>"
                '<form method="post"><button type="submit" name="decision" value="complete">'
                "Complete authentication</button> "
                '<button type="submit" name="decision" value="fail" class="secondary">'
                "Fail authentication</button></form>",
            )
        details = session.customer_details or {}
        email, name = details.get("email") or "", details.get("name") or ""
        result = cards.SUCCEEDS if request.form.get("decision") == "complete" else cards.AUTHENTICATION_FAILED
        lifecycle.pay(state, session, result, last4=intent.card_last4 or "", email=email, name=name)
        if result.outcome is cards.Outcome.SUCCEEDS:
            return redirect(after_payment(session), code=303)
        return _checkout_form(state, session, error=result.message, email=email, name=name), 402


def _closed(session: CheckoutSession) -> ResponseReturnValue:
    if session.status is SessionStatus.COMPLETE:
        location = lifecycle.success_location(session)
        return message_page(
            "Payment complete",
            "This payment is complete. Thank you.",
            link=(location, "Return to the shop") if location else None,
        )
    back = (session.cancel_url, "Return to the shop") if session.cancel_url else None
    return message_page("Checkout expired", "This checkout session is no longer active.", link=back), 410


def _checkout_form(
    state: PaymentsSandboxState, session: CheckoutSession, *, error: str | None, email: str, name: str
) -> str:
    account = state.world.accounts.get(session.account_id or "")
    merchant = (account.business_name if account else None) or state.config.platform_name
    rows = "".join(
        f"<tr><td>{escape(item.name)} &times; {item.quantity}</td>"
        f'<td class="amount">{escape(format_amount(item.amount, item.currency))}</td></tr>'
        for item in session.line_items
    )
    total = format_amount(session.amount_total, session.currency)
    alert = f'<p role="alert">{escape(error)}</p>' if error else ""
    cancel = (
        f'<p><a href="{escape(session.cancel_url)}">Back to {escape(merchant)}</a></p>'
        if session.cancel_url
        else ""
    )
    return page(
        f"Pay {merchant}",
        f"{cancel}<h1>Pay {escape(merchant)}</h1>"
        f'<table aria-label="Order summary">{rows}<tr><td><strong>Total</strong></td>'
        f'<td class="amount"><strong>{escape(total)}</strong></td></tr></table>{alert}'
        '<form method="post">'
        '<label for="email">Email</label>'
        f'<input type="email" id="email" name="email" value="{escape(email)}" autocomplete="email">'
        '<label for="cardnumber">Card number</label>'
        '<input type="text" id="cardnumber" name="cardnumber" inputmode="numeric" '
        'autocomplete="cc-number" placeholder="1234 1234 1234 1234">'
        '<label for="exp">Expiration (MM / YY)</label>'
        '<input type="text" id="exp" name="exp" autocomplete="cc-exp" placeholder="MM / YY">'
        '<label for="cvc">CVC</label>'
        '<input type="text" id="cvc" name="cvc" inputmode="numeric" autocomplete="cc-csc" placeholder="CVC">'
        '<label for="name">Cardholder name</label>'
        f'<input type="text" id="name" name="name" value="{escape(name)}" autocomplete="cc-name">'
        f'<button type="submit">Pay {escape(total)}</button>'
        "</form><p>Test mode: use a test card such as 4242 4242 4242 4242.</p>",
    )


def no_store(response: Response) -> Response:
    response.headers["Cache-Control"] = "no-store"
    return response


blueprint.after_request(no_store)
