"""Bundled sample data: several days of realistic assistant traffic, and recorded judgments for it.

An internal-policy assistant answers questions on travel and expenses, the IT help desk, HR leave,
the returns policy, security and facilities from a small knowledge base. Each answer is built
sentence by sentence from claims that paraphrase facts of one passage, and each sentence is drawn
as one of the failure kinds of SPEC §3–§5 at a realistic rate, so the job has something to find.

Why the recorded judgments stay correct without a per-turn table: a recorded judge maps a
statement *text* to the labels that support it, yet the same passage sits under different labels
in different turns. So the wording of a claim is a function of where its supporting passage sits
(`S1` → one paraphrase, `S2` → another, absent → a third …). A text therefore always comes with
the same supporting label, in every turn and every generated day, and `full_judge_spec()` can
list every statement the generator can ever write: one judge file serves any date range.

Each day depends only on (seed, date): `generate(d, 2)` holds exactly the turns of
`generate(d, 1)` and `generate(d + 1, 1)`, including the follow-ups of conversations that
started the evening before. Standard library only; no network.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

REFUSAL_SENTENCES: tuple[str, ...] = (
    "I can't find that in the provided documents.",
    "The provided documents don't cover that question.",
)

OFFERS: tuple[str, ...] = (
    "Let me know if you need anything else.",
    "Let me know if you want the link to the form.",
    "Would you like me to open a ticket for you?",
    "I hope this helps.",
    "Feel free to ask if anything is unclear.",
    "Is there anything else I can help with?",
    "Happy to help with the next step.",
)

_REFUSAL_OFFERS = (OFFERS[0], OFFERS[2], OFFERS[5])

_USER_QUESTIONS_BY_DOMAIN: dict[str, tuple[str, ...]] = {
    "travel": ("Which country are you travelling to?", "Do you already have a booking reference?"),
    "it": ("Which device are you using?", "Are you working from the office or from home today?"),
    "hr": ("Is this for a full-time or a part-time contract?", "When would your leave start?"),
    "returns": ("Was the item bought online or in store?", "Does the customer have the receipt?"),
    "security": ("Was it a work laptop or a work phone?", "Did you already report it to the help desk?"),
    "workplace": ("Which office are you based in?", "Has your manager already agreed?"),
}
USER_QUESTIONS: tuple[str, ...] = tuple(q for qs in _USER_QUESTIONS_BY_DOMAIN.values() for q in qs)

# Lead-ins that reword a claim without changing what it says (see the module docstring).
PREFIXES: tuple[str, ...] = (
    "Note that ", "In general, ", "As a rule, ", "Keep in mind that ", "Under the current policy, ",
    "Also, ", "In short, ", "Yes, ",
)

KINDS: tuple[str, ...] = (
    "supported", "padded", "miscited", "uncited", "unsupported", "joint", "unknown_label",
    "stale_label", "duplicate_marker", "pointer_problem", "offer", "question", "refusal",
)

MALFORMED_KINDS: tuple[str, ...] = (
    "truncated_json", "python_repr", "not_an_object", "missing_turn_id", "empty_turn_id",
    "context_not_list", "answer_not_string", "passage_without_label", "unknown_answer_format",
    "native_without_documents",
)

# (key namespace, position): "S" markers are 1-based prompt labels, "D" native document indexes
# are 0-based; position None = the supporting passage is not in the context set. Most frequent first.
_SINGLE_KEYS: tuple[tuple[str, int | None], ...] = (
    ("S", 1), ("S", 2), ("S", 3), ("D", 1), ("S", 4), ("D", 2), ("S", None), ("D", 0), ("S", 5),
    ("D", 3), ("S", 6), ("D", 4), ("D", 5),
)
_JOINT_KEYS: tuple[tuple[int, int], ...] = tuple(
    (a, b) for a in range(1, 5) for b in range(1, 5) if a != b
)
_MAX_NATIVE_PASSAGES = 5

_MODELS = (("assistant-a", 50), ("assistant-b", 35), ("assistant-c", 15))
_PRODUCTS = (("policy-chat", 70), ("helpdesk-bot", 30))
_LOCALES = (("en-GB", 50), ("en-US", 30), ("en-IE", 20))
_PROMPTS = (("p1", 55), ("p2", 45))
_HOUR_WEIGHTS = (1, 1, 1, 1, 1, 2, 4, 8, 12, 14, 14, 13, 11, 12, 13, 12, 10, 8, 5, 4, 3, 2, 2, 2)

# Per-sentence kind weights of check-worthy claims, by model (assistant-c is the sloppy one).
_KIND_WEIGHTS: dict[str, dict[str, float]] = {
    "assistant-a": {"supported": 70, "padded": 5, "miscited": 5, "uncited": 7, "unsupported": 5,
                    "joint": 4, "unknown_label": 1.5, "stale_label": 2.5, "duplicate_marker": 1},
    "assistant-b": {"supported": 60, "padded": 10, "miscited": 7, "uncited": 8, "unsupported": 7,
                    "joint": 3, "unknown_label": 2, "stale_label": 3, "duplicate_marker": 1},
    "assistant-c": {"supported": 50, "padded": 6, "miscited": 12, "uncited": 10, "unsupported": 12,
                    "joint": 3, "unknown_label": 4, "stale_label": 3, "duplicate_marker": 1},
}
_NATIVE_KIND_WEIGHTS = {"supported": 68, "padded": 5, "miscited": 6, "uncited": 8, "unsupported": 6,
                        "pointer_problem": 7}

# ---------------------------------------------------------------------------------------------
# Knowledge base: (domain, passage id, source, text, question, claims (paraphrases), wrong)
# Each claim paraphrases one fact of its passage and no other passage states it; each "wrong"
# sentence is on the passage's topic but no passage supports it (a changed number or rule).
# ---------------------------------------------------------------------------------------------

_KB_ROWS: tuple[tuple[str, str, str, str, str, tuple[tuple[str, ...], ...], tuple[str, ...]], ...] = (
    ("travel", "travel-lodging", "Travel policy v4 > Lodging",
     "The nightly hotel cap is 220 euros, or 300 euros in London, Paris and Zurich. A stay above the "
     "cap needs written approval from your manager before you book. Breakfast is covered by the cap "
     "when the hotel lists it on the room invoice. Book hotels through the travel portal so the stay "
     "appears in your trip record.",
     "What is the hotel limit per night?",
     (("The nightly hotel cap is 220 euros.", "Hotels are reimbursed up to 220 euros per night."),
      ("The hotel cap is 300 euros per night in London, Paris and Zurich.",
       "In London, Paris and Zurich you can spend up to 300 euros a night on a hotel."),
      ("A stay above the cap needs your manager's written approval before you book.",
       "Get written approval from your manager before booking a hotel above the cap."),
      ("Breakfast is covered by the cap if it appears on the room invoice.",
       "Breakfast listed on the room invoice counts toward the hotel cap."),
      ("Hotels should be booked through the travel portal.",
       "Use the travel portal to book hotels so the stay shows up in your trip record.")),
     ("The nightly hotel cap is 250 euros.", "In London the hotel cap is 350 euros per night.",
      "A stay above the cap can be approved after you return from the trip.")),
    ("travel", "travel-exceptions", "Travel policy v4 > Exceptions",
     "If the official conference hotel is sold out, you may book the nearest available hotel. Any "
     "amount above the cap is reimbursed only with the approval described under Lodging. Exceptions "
     "for accessibility needs are approved by HR rather than by your manager. Keep the sold-out "
     "notice or a screenshot of it with your expense report.",
     "The conference hotel is sold out. What can I book instead?",
     (("If the conference hotel is sold out, you may book the nearest available hotel.",
       "When the official conference hotel is full, booking the nearest available hotel is allowed."),
      ("Accessibility exceptions are approved by HR, not by your manager.",
       "HR approves travel exceptions for accessibility needs."),
      ("Keep the sold-out notice or a screenshot of it with your expense report.",
       "Add a screenshot of the sold-out notice to your expense report.")),
     ("If the conference hotel is sold out, any hotel in the city is reimbursed in full.",
      "Accessibility exceptions are approved by your manager.")),
    ("travel", "travel-rail", "Travel policy v4 > Rail",
     "Book second class for trips under four hours. First class is allowed for trips of four hours or "
     "more. Rail is preferred over flying for any trip under five hours door to door. Rail passes such "
     "as a BahnCard are reimbursed when they pay for themselves within 12 months.",
     "Can I travel first class on the train?",
     (("Book second class for trips under four hours.",
       "Train trips shorter than four hours are booked in second class."),
      ("First class is allowed for train trips of four hours or more.",
       "For rail trips of at least four hours you may travel first class."),
      ("Rail is preferred over flying for trips under five hours door to door.",
       "For trips under five hours door to door, take the train instead of flying."),
      ("A rail pass is reimbursed if it pays for itself within 12 months.",
       "Rail passes are covered when they pay off within 12 months.")),
     ("First class is allowed for train trips over two hours.", "Rail passes are never reimbursed.")),
    ("travel", "travel-air", "Travel policy v4 > Air travel",
     "Economy class is the standard for all flights. Business class is allowed on flights longer than "
     "eight hours, e.g. most intercontinental routes. Book flights at least 14 days before departure "
     "when the trip allows it. Checked baggage is reimbursed for trips of three nights or more.",
     "Can I fly business class to Singapore?",
     (("Economy class is the standard for all flights.", "Flights are booked in economy class by default."),
      ("Business class is allowed on flights longer than eight hours.",
       "On flights of more than eight hours, e.g. most intercontinental routes, you may fly business class."),
      ("Flights should be booked at least 14 days before departure when possible.",
       "Try to book flights 14 days or more ahead of departure."),
      ("Checked baggage is reimbursed for trips of three nights or more.",
       "For trips of at least three nights, the cost of checked baggage is covered.")),
     ("Business class is allowed on flights longer than five hours.",
      "Flights must be booked at least 30 days before departure.", "Checked baggage is always reimbursed.")),
    ("travel", "travel-per-diem", "Travel policy v4 > Per diem",
     "The daily meal allowance is 45 euros for a full travel day. Days of departure and return get 60 "
     "percent of the allowance. Meals that the event or a client pays for are deducted from the "
     "allowance. The allowance is paid automatically with the trip report, so meal receipts are not "
     "needed.",
     "How much is the meal allowance?",
     (("The daily meal allowance is 45 euros for a full travel day.",
       "A full day of travel earns a meal allowance of 45 euros."),
      ("On the days of departure and return you get 60 percent of the meal allowance.",
       "Departure and return days are paid at 60 percent of the daily allowance."),
      ("Meals paid by the event or a client are deducted from the allowance.",
       "When a client or the event pays for a meal, it is taken off your allowance."),
      ("Meal receipts are not needed because the allowance is paid with the trip report.",
       "You do not need receipts for meals covered by the allowance.")),
     ("The daily meal allowance is 60 euros.", "Departure days are paid at the full allowance.",
      "Meal receipts must be uploaded to get the allowance.")),
    ("travel", "travel-taxi", "Travel policy v4 > Taxis and ride-hailing",
     "Taxis and ride-hailing are reimbursed when public transport is not practical, e.g. late at night "
     "or with heavy luggage. Trips to and from the airport are always covered. Tips up to 10 percent of "
     "the fare are reimbursed. Rentals of e-scooters are not reimbursed.",
     "Can I take a taxi from the airport?",
     (("Taxis are reimbursed when public transport is not practical, e.g. late at night.",
       "You can claim a taxi or ride-hailing trip if public transport is impractical."),
      ("Taxi trips to and from the airport are always covered.",
       "Airport transfers by taxi are always reimbursed."),
      ("Tips of up to 10 percent of the fare are reimbursed.",
       "You can claim a tip of up to 10 percent on a taxi fare."),
      ("E-scooter rentals are not reimbursed.", "The cost of renting an e-scooter cannot be claimed.")),
     ("Tips of up to 20 percent of the fare are reimbursed.",
      "Taxis are only reimbursed for trips to the airport.")),
    ("travel", "expenses-reimbursement", "Expenses FAQ > Reimbursement",
     "Approved expense reports are paid with the next monthly payroll. Reports submitted after the "
     "20th of the month are paid one month later. Your manager has 7 days to approve a report before "
     "it is escalated to their manager. Reports in a foreign currency are converted at the rate of the "
     "day of the expense.",
     "When will I get my expenses paid?",
     (("Approved expense reports are paid with the next monthly payroll.",
       "Once approved, your expenses are paid out with the next payroll."),
      ("Reports submitted after the 20th are paid a month later.",
       "A report submitted after the 20th of the month is paid one month later."),
      ("Managers have 7 days to approve a report before it is escalated.",
       "A report that your manager does not approve within 7 days is escalated to their manager."),
      ("Foreign currency expenses are converted at the rate of the day of the expense.",
       "Expenses in another currency use the exchange rate of the day you spent the money.")),
     ("Approved reports are paid within 5 business days.", "Managers have 14 days to approve a report.",
      "Foreign currency expenses are converted at the rate of the day you submit the report.")),
    ("travel", "expenses-receipts", "Expense tool guide > Receipts",
     "Upload an itemized receipt for every expense over 25 euros. A card statement is not accepted as a "
     "receipt. Photos taken with the mobile app count as originals, so you do not need to keep the "
     "paper copy. Missing receipts can be replaced by a signed declaration at most twice a year.",
     "Do I need a receipt for a 30 euro lunch?",
     (("Every expense over 25 euros needs an itemized receipt.",
       "Upload an itemized receipt for each expense above 25 euros."),
      ("A card statement is not accepted as a receipt.", "Card statements do not count as receipts."),
      ("Receipt photos taken with the mobile app count as originals.",
       "You do not need to keep a paper receipt once you have photographed it in the mobile app."),
      ("A signed declaration can replace a missing receipt at most twice a year.",
       "You can use a signed declaration for a lost receipt up to two times per year.")),
     ("Every expense over 50 euros needs an itemized receipt.",
      "A card statement is accepted when the receipt is lost.",
      "Paper receipts must be kept for seven years.")),
    ("travel", "expenses-mileage", "Expense tool guide > Mileage",
     "Business trips in your own car are reimbursed at 0.30 euros per kilometre. The commute between "
     "home and your usual office is not reimbursable. Enter the start and end address so the tool can "
     "calculate the distance. Parking and tolls are claimed separately with receipts.",
     "What is the mileage rate for my own car?",
     (("Driving your own car for business is reimbursed at 0.30 euros per kilometre.",
       "The mileage rate for business trips in a private car is 0.30 euros per kilometre."),
      ("Your commute between home and your usual office cannot be claimed.",
       "The commute from home to your regular office is not reimbursable."),
      ("Enter the start and end address so the tool calculates the distance.",
       "The expense tool works out the distance from the start and end address you enter."),
      ("Parking and tolls are claimed separately with receipts.",
       "Claim parking and tolls as separate items with their receipts.")),
     ("The mileage rate is 0.42 euros per kilometre.",
      "The commute to your usual office is reimbursed at half the mileage rate.")),
    ("travel", "expenses-card", "Expense tool guide > Corporate card",
     "Employees who travel more than four times a year can request a corporate card. Card transactions "
     "appear in the expense tool within approx. 2 business days. Personal purchases on the corporate "
     "card are not allowed and must be repaid within 30 days. The card limit is 5,000 euros per month "
     "unless finance approves a higher limit.",
     "How do I get a corporate card?",
     (("You can request a corporate card if you travel more than four times a year.",
       "Frequent travellers, i.e. those with more than four trips a year, can get a corporate card."),
      ("Card transactions show up in the expense tool within approx. 2 business days.",
       "It takes about 2 business days for a card transaction to appear in the expense tool."),
      ("Personal purchases on the corporate card must be repaid within 30 days.",
       "A personal purchase made with the corporate card has to be repaid within 30 days."),
      ("The corporate card limit is 5,000 euros per month.",
       "Corporate cards have a monthly limit of 5,000 euros unless finance approves more.")),
     ("The corporate card limit is 10,000 euros per month.",
      "Personal purchases on the corporate card are fine if repaid within a year.")),
    ("it", "it-password", "IT help desk > Password reset",
     "Reset your password at the self-service portal with your employee number and your phone. The "
     "reset link is valid for 30 minutes. Passwords must have at least 14 characters and expire every "
     "180 days. After 5 failed attempts the account is locked for 15 minutes.",
     "How do I reset my password?",
     (("You can reset your password at the self-service portal.",
       "Passwords are reset through the self-service portal with your employee number and phone."),
      ("The password reset link is valid for 30 minutes.", "A password reset link expires after 30 minutes."),
      ("Passwords need at least 14 characters.", "A password must be 14 characters or longer."),
      ("Passwords expire every 180 days.", "You have to change your password every 180 days."),
      ("Your account is locked for 15 minutes after 5 failed attempts.",
       "Five failed login attempts lock the account for 15 minutes.")),
     ("The reset link is valid for 24 hours.", "Passwords need at least 8 characters.",
      "After 3 failed attempts the account is locked for an hour.")),
    ("it", "it-vpn", "IT help desk > VPN",
     "Connect to the VPN with the GlobalConnect client before opening internal tools from outside the "
     "office. The VPN disconnects after 12 hours and you have to sign in again. Split tunnelling is "
     "off, so all traffic goes through the company network. If the client shows error 809, restart "
     "your home router and try again.",
     "Why does my VPN keep disconnecting?",
     (("You need the VPN to open internal tools from outside the office.",
       "Connect with the GlobalConnect client before using internal tools away from the office."),
      ("The VPN disconnects after 12 hours.",
       "VPN sessions end after 12 hours, so you have to sign in again."),
      ("All traffic goes through the company network because split tunnelling is off.",
       "Split tunnelling is disabled on the VPN."),
      ("When the client shows error 809, restart your home router and try again.",
       "For VPN error 809, restarting your home router is the first step.")),
     ("The VPN disconnects after 8 hours.", "Split tunnelling is enabled for video calls.")),
    ("it", "it-laptop", "IT help desk > Laptop replacement",
     "Laptops are replaced every 4 years, or earlier if a repair would cost more than half of a new "
     "device. Order a replacement through the IT catalogue and pick a standard model. Return the old "
     "laptop within 10 working days after the new one arrives. Data is not copied automatically, so "
     "back up local files to your cloud drive first.",
     "When can I get a new laptop?",
     (("Laptops are replaced every 4 years.", "You get a new laptop every four years."),
      ("A laptop is replaced early if a repair would cost more than half of a new one.",
       "When a repair would cost more than half the price of a new device, the laptop is replaced."),
      ("Return your old laptop within 10 working days of receiving the new one.",
       "The old laptop must go back within 10 working days after the new one arrives."),
      ("Local files are not copied to the new laptop automatically.",
       "Back up local files to your cloud drive first, because data is not copied automatically.")),
     ("Laptops are replaced every 3 years.", "Return the old laptop within 30 days.",
      "IT copies all local files to the new laptop.")),
    ("it", "it-software", "IT help desk > Software requests",
     "Software from the approved catalogue installs without approval through the Company Portal app. "
     "Anything outside the catalogue needs a request ticket and a security review, which takes approx. "
     "5 working days. Licences that cost more than 500 euros a year also need budget approval from your "
     "cost centre owner. Browser extensions follow the same rules as other software.",
     "How do I install software that is not in the catalogue?",
     (("Catalogue software installs without approval through the Company Portal app.",
       "Apps in the approved catalogue need no approval to install."),
      ("Software outside the catalogue needs a request ticket and a security review.",
       "To get software that is not in the catalogue, open a request ticket for a security review."),
      ("The security review takes approx. 5 working days.",
       "Expect the security review for new software to take about 5 working days."),
      ("Licences over 500 euros a year need budget approval from the cost centre owner.",
       "A licence that costs more than 500 euros a year also needs budget approval."),
      ("Browser extensions follow the same rules as other software.",
       "The software rules also apply to browser extensions.")),
     ("The security review takes approx. 2 working days.",
      "Licences over 100 euros a year need budget approval.")),
    ("it", "it-mfa", "IT help desk > Multi-factor authentication",
     "Multi-factor authentication is required for every login from outside the office network. Use the "
     "Authenticator app as your main method, because text messages are allowed only as a backup. If "
     "you change phones, register the new phone before you wipe the old one. The help desk can issue a "
     "temporary code valid for 24 hours after verifying your identity.",
     "I got a new phone. How do I move my authenticator?",
     (("Multi-factor authentication is required for every login from outside the office network.",
       "Logging in from outside the office network always needs multi-factor authentication."),
      ("Text messages are allowed only as a backup method.",
       "Use the Authenticator app, since text messages are only a backup."),
      ("Register your new phone before you wipe the old one.",
       "When you change phones, set up the new one before wiping the old phone."),
      ("The help desk can issue a temporary code that is valid for 24 hours.",
       "A temporary code from the help desk lasts 24 hours.")),
     ("Text messages are the preferred second factor.", "A temporary code from the help desk lasts 7 days.")),
    ("it", "it-printing", "IT help desk > Printing",
     "Print jobs are held until you tap your badge on any office printer. Jobs that are not released "
     "within 24 hours are deleted. Colour printing is limited to 200 pages per month per person. "
     "Printers on the 3rd floor also scan to email.",
     "Why did my print job disappear?",
     (("Print jobs are released when you tap your badge on a printer.",
       "Your print job waits until you tap your badge on any office printer."),
      ("Unreleased print jobs are deleted after 24 hours.",
       "A print job that is not released within 24 hours is deleted."),
      ("Colour printing is limited to 200 pages per person per month.",
       "Each person can print up to 200 colour pages a month."),
      ("The printers on the 3rd floor can scan to email.",
       "You can scan to email on the 3rd floor printers.")),
     ("Colour printing is limited to 500 pages per month.", "Unreleased print jobs are kept for a week.")),
    ("it", "it-mailbox", "IT help desk > Email and storage",
     "Every mailbox has a quota of 50 GB. Items in Deleted Items are removed after 30 days. Attachments "
     "larger than 25 MB are blocked, so share large files as a cloud drive link instead. Shared "
     "mailboxes are requested by a team lead through a ticket.",
     "My mailbox is full. How big can it be?",
     (("Each mailbox has a quota of 50 GB.", "Your mailbox can hold up to 50 GB."),
      ("Deleted items are removed after 30 days.", "Anything in Deleted Items is cleared after 30 days."),
      ("Attachments larger than 25 MB are blocked.",
       "Share large files as a cloud drive link, because attachments over 25 MB are blocked."),
      ("A team lead requests shared mailboxes through a ticket.",
       "Shared mailboxes must be requested by a team lead.")),
     ("Each mailbox has a quota of 100 GB.", "Attachments of up to 50 MB are allowed.")),
    ("hr", "hr-annual-leave", "HR handbook > Annual leave",
     "Full-time employees get 28 days of annual leave per calendar year. Part-time employees get leave "
     "in proportion to their contracted hours. Request leave in the HR portal at least 2 weeks ahead "
     "for absences longer than 3 days. Your manager should answer a leave request within 5 working days.",
     "How many vacation days do I have?",
     (("Full-time employees get 28 days of annual leave per year.",
       "The annual leave entitlement for full-time staff is 28 days per calendar year."),
      ("Part-time staff get leave in proportion to their contracted hours.",
       "Leave for part-time employees is pro rata to their contracted hours."),
      ("Absences longer than 3 days should be requested at least 2 weeks ahead.",
       "Request leave of more than 3 days at least two weeks in advance."),
      ("Managers should answer leave requests within 5 working days.",
       "Your manager is expected to reply to a leave request within 5 working days.")),
     ("Full-time employees get 25 days of annual leave.", "Leave must be requested 4 weeks ahead.")),
    ("hr", "hr-carry-over", "HR handbook > Carry-over",
     "Up to 5 unused days can be carried over into the next year. Carried-over days must be taken by 31 "
     "March or they are lost. Days above the carry-over limit are not paid out, except when you leave "
     "the company. Your manager can approve an extra carry-over of up to 5 days after long sick leave.",
     "Can I keep my unused holidays for next year?",
     (("You can carry over up to 5 unused leave days into the next year.",
       "Up to five days of unused leave move into the next year."),
      ("Carried-over days must be taken by 31 March.",
       "Days you carry over are lost if you do not take them by 31 March."),
      ("Unused days above the limit are not paid out unless you leave the company.",
       "Days over the carry-over limit are only paid out when you leave the company."),
      ("After long sick leave, your manager can approve up to 5 extra carry-over days.",
       "Managers may allow an extra carry-over of up to 5 days after a long sick leave.")),
     ("You can carry over up to 10 unused days.", "Carried-over days must be taken by 30 June.",
      "Unused leave days are paid out at the end of the year.")),
    ("hr", "hr-sick-leave", "HR handbook > Sick leave",
     "Tell your manager before your usual start time on the first day of sickness. A doctor's note is "
     "needed from the fourth day of absence. Full pay continues for up to 6 weeks per illness. Sick "
     "days during annual leave are credited back if you send a doctor's note.",
     "Do I need a doctor's note when I'm sick?",
     (("Tell your manager before your usual start time on your first sick day.",
       "On the first day of sickness, inform your manager before you would normally start work."),
      ("A doctor's note is needed from the fourth day of sickness.",
       "You need a doctor's note once you are off sick for more than three days."),
      ("Full pay continues for up to 6 weeks per illness.",
       "Each illness is paid in full for up to six weeks."),
      ("Sick days during annual leave are credited back with a doctor's note.",
       "If you fall ill on holiday, a doctor's note gets those days credited back.")),
     ("A doctor's note is needed from the first day of absence.",
      "Full pay continues for up to 12 weeks per illness.")),
    ("hr", "hr-parental-leave", "HR handbook > Parental leave",
     "Birth mothers get 16 weeks of paid maternity leave. The second parent gets 4 weeks of paid leave, "
     "to be taken within 6 months of the birth or adoption. Notify HR at least 8 weeks before the leave "
     "starts. Parental leave can be followed by up to 12 months of part-time work with a right to "
     "return to full-time hours.",
     "How much parental leave does the second parent get?",
     (("Birth mothers get 16 weeks of paid maternity leave.",
       "Paid maternity leave for birth mothers is 16 weeks."),
      ("The second parent gets 4 weeks of paid leave.",
       "Second parents are entitled to four weeks of paid leave."),
      ("The second parent's leave must be taken within 6 months of the birth or adoption.",
       "Second parents take their paid leave within six months of the birth or adoption."),
      ("Notify HR at least 8 weeks before parental leave starts.",
       "HR needs at least 8 weeks of notice before your parental leave begins."),
      ("After parental leave you can work part-time for up to 12 months and then return to full-time hours.",
       "You may work part-time for up to 12 months after parental leave, with a right to return to full "
       "time.")),
     ("The second parent gets 2 weeks of paid leave.", "Birth mothers get 20 weeks of paid maternity leave.",
      "Notify HR at least 4 weeks before parental leave starts.")),
    ("hr", "hr-public-holidays", "HR handbook > Public holidays",
     "Public holidays follow the calendar of the country in your employment contract. If a public "
     "holiday falls on a weekend, no replacement day is given. The office closes between 24 and 26 "
     "December, and those days do not count as annual leave. Employees in the U.S. office follow the "
     "federal holiday calendar.",
     "Do I get a day off when a holiday falls on a Saturday?",
     (("Public holidays follow the calendar of the country in your contract.",
       "Your public holidays are those of the country named in your employment contract."),
      ("No replacement day is given when a public holiday falls on a weekend.",
       "A public holiday on a weekend does not give you a day off in lieu."),
      ("The office is closed from 24 to 26 December without using annual leave.",
       "The closure between 24 and 26 December does not count as annual leave."),
      ("Staff in the U.S. office follow the federal holiday calendar.",
       "Employees based in the U.S. office use the federal holiday calendar.")),
     ("A replacement day is given when a public holiday falls on a weekend.",
      "The office is closed between 24 December and 2 January.")),
    ("hr", "hr-unpaid-leave", "HR handbook > Unpaid leave",
     "Unpaid leave of up to 3 months can be requested after one year of service. Requests go to your "
     "manager and HR at least 6 weeks in advance. Pension and health benefits continue during unpaid "
     "leave, but no new annual leave accrues. Longer sabbaticals are decided case by case by the HR "
     "director.",
     "Can I take three months of unpaid leave?",
     (("Unpaid leave of up to 3 months is possible after one year of service.",
       "After a year of service you can request up to three months of unpaid leave."),
      ("Request unpaid leave at least 6 weeks in advance.",
       "Unpaid leave requests go to your manager and HR six weeks or more ahead."),
      ("Pension and health benefits continue during unpaid leave.",
       "You keep your pension and health benefits while on unpaid leave."),
      ("No annual leave accrues during unpaid leave.", "Unpaid leave does not earn new annual leave days.")),
     ("Unpaid leave of up to 6 months can be requested.", "Unpaid leave requires three years of service.")),
    ("hr", "hr-bereavement", "HR handbook > Bereavement leave",
     "You get 5 days of paid bereavement leave for a close family member. For other relatives the leave "
     "is 1 day. Bereavement leave does not have to be taken in one block and can be used within 3 "
     "months. Tell your manager, and no proof is required.",
     "How much time off do I get after a death in the family?",
     (("You get 5 days of paid bereavement leave for a close family member.",
       "Paid bereavement leave for a close family member is five days."),
      ("Bereavement leave for other relatives is 1 day.", "For other relatives you get one day of leave."),
      ("Bereavement leave can be split up and used within 3 months.",
       "You do not have to take bereavement leave in one block, as long as you use it within 3 months."),
      ("No proof is required for bereavement leave.", "Bereavement leave does not need any proof.")),
     ("You get 10 days of paid bereavement leave.",
      "A death certificate is required for bereavement leave.")),
    ("returns", "returns-window", "Returns policy > Window",
     "Standard items can be returned up to 30 days after delivery. Items bought between 1 November and "
     "24 December can be returned until 15 January. The return window starts on the delivery date shown "
     "in the order history. Items must be unused and in their original packaging.",
     "How long does a customer have to return an item?",
     (("Standard items can be returned within 30 days of delivery.",
       "Customers have 30 days from delivery to return a standard item."),
      ("Items bought between 1 November and 24 December can be returned until 15 January.",
       "Holiday purchases made from 1 November to 24 December may be returned until 15 January."),
      ("The return window starts on the delivery date in the order history.",
       "The return period is counted from the delivery date shown in the order history."),
      ("Returned items must be unused and in their original packaging.",
       "Only unused items in their original packaging can be returned.")),
     ("Standard items can be returned within 60 days of delivery.",
      "Holiday purchases can be returned until 31 January.")),
    ("returns", "returns-proof", "Returns policy > Proof of purchase",
     "A receipt or the order number is required for every return. Without proof of purchase, staff can "
     "offer store credit at the lowest recent selling price. Gift receipts allow an exchange or store "
     "credit but not a cash refund.",
     "Can a customer return something without a receipt?",
     (("Every return needs a receipt or the order number.",
       "A receipt or the order number is required to return an item."),
      ("Without proof of purchase, staff can offer store credit at the lowest recent selling price.",
       "A customer without proof of purchase can get store credit at the lowest recent price."),
      ("Gift receipts allow an exchange or store credit, but not a cash refund.",
       "With a gift receipt the customer can exchange or get store credit, but no cash refund.")),
     ("Returns without a receipt get a full cash refund.", "Gift receipts allow a cash refund.")),
    ("returns", "returns-refunds", "Returns policy > Refunds",
     "Refunds go to the original payment method within 10 days of receiving the item. Shipping costs "
     "are refunded only if the item was faulty or wrong. Cash purchases are refunded in cash in store, "
     "or by bank transfer for online orders.",
     "When does the customer get the money back?",
     (("Refunds go to the original payment method.",
       "The refund is paid back to the payment method the customer used."),
      ("Refunds are issued within 10 days of receiving the item.",
       "Customers get their refund within 10 days after the item is received."),
      ("Shipping costs are refunded only for faulty or wrong items.",
       "Shipping is refunded only when the item was faulty or wrong."),
      ("Cash purchases are refunded in cash in store.",
       "A cash purchase made in store is refunded in cash.")),
     ("Refunds are issued within 3 days of receiving the item.", "Shipping costs are always refunded.")),
    ("returns", "returns-exchanges", "Returns policy > Exchanges",
     "Exchanges for a different size or colour are free of charge. An exchange can be done in any store "
     "or by post with the prepaid label. If the new item costs more, the customer pays the difference.",
     "Does an exchange cost anything?",
     (("Exchanges for another size or colour are free.",
       "Swapping an item for a different size or colour costs nothing."),
      ("Exchanges can be done in any store or by post with the prepaid label.",
       "Customers can exchange items in any store or send them with the prepaid label."),
      ("The customer pays the difference if the new item costs more.",
       "When the replacement item is more expensive, the customer pays the difference.")),
     ("Exchanges cost 5 euros for postage.", "Exchanges are only possible in the original store.")),
    ("returns", "returns-clearance", "Returns policy > Clearance",
     "Clearance items are final sale and cannot be returned. Faulty clearance items can still be "
     "repaired or replaced under warranty. Items sold as clearance carry a red tag and the word final "
     "on the receipt.",
     "Can clearance items be returned?",
     (("Clearance items cannot be returned.", "Items sold as clearance are final sale."),
      ("Faulty clearance items can still be repaired or replaced under warranty.",
       "The warranty still covers repair or replacement of a faulty clearance item."),
      ("Clearance items carry a red tag.", "You can recognise clearance items by their red tag.")),
     ("Clearance items can be returned within 14 days.",
      "Faulty clearance items are not covered by the warranty.")),
    ("returns", "returns-damaged", "Returns policy > Damaged items",
     "Items damaged in transit must be reported within 48 hours of delivery. Ask the customer for a "
     "photo of the damage and of the parcel. Damaged items are replaced free of charge, or refunded if "
     "no replacement is in stock.",
     "A parcel arrived broken. What should the customer do?",
     (("Transit damage must be reported within 48 hours of delivery.",
       "Customers have 48 hours after delivery to report an item damaged in transit."),
      ("Ask the customer for photos of the damage and of the parcel.",
       "The customer should send a photo of the damage and one of the parcel."),
      ("Damaged items are replaced free of charge.",
       "A damaged item is refunded when no replacement is in stock.")),
     ("Transit damage can be reported within 30 days.",
      "Customers pay postage for damaged item replacements.")),
    ("returns", "returns-online", "Returns policy > Online orders",
     "Online orders can be returned in store or by post. Postal returns use the prepaid label from the "
     "order confirmation email. A return by post is processed approx. 5 days after it reaches the "
     "warehouse.",
     "How do I return an online order?",
     (("Online orders can be returned in store or by post.",
       "Customers can bring an online order back to a store or send it by post."),
      ("Postal returns use the prepaid label from the order confirmation email.",
       "For a postal return, use the prepaid label in the order confirmation email."),
      ("A postal return is processed approx. 5 days after it reaches the warehouse.",
       "Returns sent by post are processed about 5 days after they arrive at the warehouse.")),
     ("Online orders can only be returned by post.", "Postal returns are processed on the day they arrive.")),
    ("security", "security-phishing", "Security policy > Phishing",
     "Report suspicious emails with the Report Phish button in Outlook. Do not forward the email to "
     "colleagues or to the help desk. If you clicked a link or entered your password, call the security "
     "hotline at 4400 straight away. The security team answers reports within 1 hour during business "
     "hours.",
     "I think I got a phishing email. What do I do?",
     (("Report suspicious emails with the Report Phish button.",
       "Use the Report Phish button in Outlook to report a suspicious email."),
      ("Do not forward a suspicious email to colleagues or the help desk.",
       "Suspicious emails should not be forwarded to colleagues or to the help desk."),
      ("If you clicked a link in the email, call the security hotline at 4400 straight away.",
       "Call the security hotline at 4400 immediately if you entered your password."),
      ("The security team answers phishing reports within 1 hour during business hours.",
       "During business hours, phishing reports get an answer within one hour.")),
     ("Forward suspicious emails to the help desk.", "The security hotline number is 4500.")),
    ("security", "security-visitors", "Security policy > Visitors",
     "Register visitors in the visitor app at least one day before they arrive. Visitors must wear a "
     "badge and be accompanied at all times. Contractors who stay longer than 2 weeks get a temporary "
     "badge from facilities.",
     "How do I bring a visitor to the office?",
     (("Register visitors in the visitor app at least one day before they arrive.",
       "Visitors have to be registered in the visitor app a day ahead."),
      ("Visitors must wear a badge and be accompanied at all times.",
       "A visitor has to wear a badge and be accompanied the whole time."),
      ("Contractors staying longer than 2 weeks get a temporary badge from facilities.",
       "Facilities gives a temporary badge to contractors who stay more than two weeks.")),
     ("Visitors can walk around unaccompanied after signing in.",
      "Contractors staying longer than a week get a permanent badge.")),
    ("security", "security-classification", "Security policy > Data classification",
     "Data is classified as public, internal, confidential or strictly confidential. Confidential data "
     "may only be shared with external parties under a signed NDA. Strictly confidential files must be "
     "encrypted, e.g. with the built-in file encryption tool. Personal data of customers is always at "
     "least confidential.",
     "Can I send a confidential file to a supplier?",
     (("There are four classification levels: public, internal, confidential and strictly confidential.",
       "Data is classified into four levels, from public to strictly confidential."),
      ("Confidential data may be shared externally only under a signed NDA.",
       "You can share confidential data with a supplier only if a signed NDA is in place."),
      ("Strictly confidential files must be encrypted.",
       "Files that are strictly confidential have to be encrypted, e.g. with the built-in tool."),
      ("Customer personal data is always at least confidential.",
       "Personal data of customers is never classified lower than confidential.")),
     ("Confidential data may be shared externally with your manager's approval.",
      "There are three classification levels.")),
    ("security", "security-lost-devices", "Security policy > Lost devices",
     "Report a lost or stolen laptop or phone to the help desk within 2 hours. The device is locked and "
     "wiped remotely once the report is confirmed. File a police report for stolen devices and attach "
     "the reference number to the ticket.",
     "I lost my work phone. What now?",
     (("Report a lost or stolen device to the help desk within 2 hours.",
       "A lost or stolen work phone or laptop must be reported within two hours."),
      ("Lost devices are locked and wiped remotely.",
       "The help desk locks and wipes a lost device remotely."),
      ("For a stolen device, file a police report and add the reference number to the ticket.",
       "Stolen devices need a police report, with its reference number attached to the ticket.")),
     ("Report a lost device within 24 hours.", "Lost devices are only wiped after 30 days.")),
    ("security", "security-clean-desk", "Security policy > Clean desk",
     "Lock your screen whenever you leave your desk. Screens lock automatically after 5 minutes of "
     "inactivity. Confidential papers go into the locked shredding bins, never into normal recycling. "
     "Desks must be cleared at the end of each day.",
     "Do I have to clear my desk every day?",
     (("Lock your screen whenever you leave your desk.",
       "Your screen must be locked every time you leave your desk."),
      ("Screens lock automatically after 5 minutes of inactivity.",
       "After five minutes without activity the screen locks itself."),
      ("Confidential papers go into the locked shredding bins.",
       "Put confidential papers in the locked shredding bins, not in normal recycling."),
      ("Desks must be cleared at the end of each day.", "Clear your desk at the end of every day.")),
     ("Screens lock automatically after 15 minutes of inactivity.",
      "Confidential papers can go into normal recycling once torn.")),
    ("security", "security-badges", "Security policy > Badges",
     "Badges must be worn visibly inside the building. A lost badge is blocked as soon as you report it "
     "at reception. The first replacement badge is free and each further one costs 15 euros. Do not let "
     "anyone follow you through a badge gate.",
     "I lost my badge. Does a new one cost money?",
     (("Badges must be worn visibly inside the building.",
       "Wear your badge where it can be seen inside the building."),
      ("A lost badge is blocked as soon as you report it at reception.",
       "Reception blocks a lost badge as soon as you report it."),
      ("The first replacement badge is free and each further one costs 15 euros.",
       "After one free replacement, a new badge costs 15 euros."),
      ("Do not let anyone follow you through a badge gate.", "Nobody may follow you through a badge gate.")),
     ("Every replacement badge costs 25 euros.", "Badges only need to be worn in secure areas.")),
    ("workplace", "facilities-desks", "Facilities guide > Desk booking",
     "Book desks in the workplace app up to 14 days ahead. Bookings that are not checked in by 10:00 "
     "are released. Team leads can reserve a team zone for up to 3 days a week.",
     "How far ahead can I book a desk?",
     (("Desks can be booked in the workplace app up to 14 days ahead.",
       "You can reserve a desk in the workplace app two weeks in advance."),
      ("Desk bookings that are not checked in by 10:00 are released.",
       "If you do not check in by 10:00, your desk booking is released."),
      ("Team leads can reserve a team zone for up to 3 days a week.",
       "A team zone can be reserved by the team lead for at most three days a week.")),
     ("Desks can be booked up to 30 days ahead.", "Unused desk bookings are released at noon.")),
    ("workplace", "facilities-parking", "Facilities guide > Parking",
     "Parking spaces are assigned by lottery every 6 months. Electric vehicle chargers are free for up "
     "to 4 hours per day. Bicycle parking in the basement is open to all employees.",
     "How do I get a parking space?",
     (("Parking spaces are assigned by lottery every 6 months.",
       "A lottery every six months decides who gets a parking space."),
      ("Electric vehicle chargers are free for up to 4 hours per day.",
       "Charging an electric car is free for up to four hours a day."),
      ("Bicycle parking in the basement is open to all employees.",
       "All employees can use the bicycle parking in the basement.")),
     ("Parking spaces are assigned by seniority.", "Electric vehicle chargers cost 5 euros per hour.")),
    ("workplace", "benefits-learning", "Benefits guide > Learning budget",
     "Each employee has a learning budget of 1,500 euros per year. Courses over 500 euros need your "
     "manager's approval. If you leave within 12 months after a course paid by the company, you repay a "
     "share of the cost.",
     "How much can I spend on training?",
     (("Each employee has a learning budget of 1,500 euros per year.",
       "The yearly learning budget is 1,500 euros per employee."),
      ("Courses over 500 euros need your manager's approval.",
       "Your manager has to approve any course that costs more than 500 euros."),
      ("If you leave within 12 months after a company-paid course, you repay part of the cost.",
       "Leaving within a year of a course the company paid for means repaying a share of it.")),
     ("Each employee has a learning budget of 3,000 euros per year.",
      "Courses over 200 euros need your manager's approval.")),
    ("workplace", "benefits-remote", "Benefits guide > Remote work",
     "You can work remotely up to 3 days a week. A one-off home office allowance of 300 euros covers a "
     "chair or a desk. Working from another country is allowed for up to 20 days a year with HR "
     "approval.",
     "Can I work from another country for a few weeks?",
     (("You can work remotely up to 3 days a week.", "Remote work is allowed on up to three days a week."),
      ("A one-off home office allowance of 300 euros covers a chair or a desk.",
       "There is a one-time allowance of 300 euros for a home office chair or desk."),
      ("Working from another country is allowed for up to 20 days a year with HR approval.",
       "With HR approval you may work from abroad for up to 20 days a year.")),
     ("You can work remotely up to 5 days a week.",
      "Working from abroad is allowed for up to 60 days a year.")),
)

# Sentences that need two passages together: (passage a, passage b, paraphrases).
_JOINT_ROWS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("travel-lodging", "travel-exceptions",
     ("If the conference hotel is sold out you may book the nearest available hotel, but a stay above the "
      "cap "
      "still needs your manager's written approval before you book.",
      "When the conference hotel is full you can book the nearest available hotel, and anything above the "
      "cap "
      "needs written approval from your manager first.")),
    ("travel-rail", "travel-air",
     ("For trips under five hours door to door take the train, and any flights are booked in economy class.",
      "Rail is preferred for trips under five hours door to door, and economy is the standard when you do "
      "fly.")),
    ("expenses-receipts", "expenses-reimbursement",
     ("Upload an itemized receipt for expenses over 25 euros, and approved reports are paid with the next "
      "monthly payroll.",
      "Expenses over 25 euros need an itemized receipt, and once the report is approved it is paid with the "
      "next payroll.")),
    ("travel-per-diem", "travel-lodging",
     ("A full travel day earns a meal allowance of 45 euros, and hotels are reimbursed up to 220 euros a "
      "night.",
      "You get 45 euros for meals on a full travel day and up to 220 euros per night for the hotel.")),
    ("it-password", "it-mfa",
     ("Passwords need at least 14 characters, and logins from outside the office network also need "
      "multi-factor authentication.",
      "Use a password of 14 characters or more, and expect multi-factor authentication whenever you log in "
      "from outside the office network.")),
    ("it-laptop", "it-software",
     ("Laptops are replaced every 4 years, and catalogue software installs on the new one without approval.",
      "You get a new laptop every four years and can install catalogue apps on it through the Company Portal "
      "app without approval.")),
    ("hr-annual-leave", "hr-carry-over",
     ("Full-time staff get 28 days of leave a year and can carry up to 5 unused days into the next year.",
      "Of the 28 days of annual leave that full-time staff get, up to 5 unused days can move into the "
      "next year.")),
    ("hr-parental-leave", "hr-unpaid-leave",
     ("The second parent gets 4 weeks of paid leave, and after one year of service up to 3 months of unpaid "
      "leave can be added.",
      "Second parents get four weeks of paid leave, and employees with a year of service can also request up "
      "to three months of unpaid leave.")),
    ("returns-window", "returns-proof",
     ("Standard items can be returned within 30 days of delivery if the customer has a receipt or the order "
      "number.",
      "With a receipt or the order number, a standard item can be returned up to 30 days after delivery.")),
    ("returns-damaged", "returns-refunds",
     ("Transit damage must be reported within 48 hours, and any refund goes back to the original payment "
      "method.",
      "Customers have 48 hours to report transit damage, and refunds are paid to the original payment "
      "method.")),
    ("returns-exchanges", "returns-online",
     ("Exchanges for another size are free, and online orders can be returned in store or by post.",
      "Swapping for another size costs nothing, and an online order can go back by post or to a store.")),
    ("security-phishing", "security-lost-devices",
     ("Report phishing with the Report Phish button, and report a lost device to the help desk within 2 "
      "hours.",
      "Suspicious emails go through the Report Phish button, while a lost phone must be reported within two "
      "hours.")),
    ("security-visitors", "security-badges",
     ("Visitors must be accompanied at all times, and your own badge must be worn visibly inside the "
      "building.",
      "Accompany your visitors the whole time and wear your own badge visibly inside the building.")),
    ("facilities-desks", "benefits-remote",
     ("You can work remotely up to 3 days a week and book a desk in the workplace app for the other days up "
      "to 14 days ahead.",
      "Remote work is allowed on up to three days a week, and office desks can be booked up to two weeks "
      "ahead in the workplace app.")),
)

_REFUSAL_QUESTIONS: tuple[tuple[str, str], ...] = (
    ("workplace", "Can I bring my dog to the office?"),
    ("it", "What is the wifi password for guests?"),
    ("hr", "How do I change my pension provider?"),
    ("workplace", "Is there a discount for the company gym?"),
    ("travel", "Can I expense a new phone case?"),
    ("security", "What is the dress code for client visits?"),
    ("hr", "When is the next all-hands meeting?"),
    ("travel", "Can I get reimbursed for a home internet upgrade?"),
    ("hr", "Who approves overtime for contractors?"),
    ("returns", "Do we accept crypto payments in store?"),
)

_UPLOADS: tuple[tuple[str, str], ...] = (
    ("User upload: hotel invoice", "Hotel Lindenhof, 3 nights, 267 euros per night, breakfast included."),
    ("User upload: taxi receipt", "Taxi from the airport to the office, 48 euros, paid by card at 23:10."),
    ("User upload: error screenshot", "Error 0x80070005: access denied while installing updates."),
    ("User upload: order confirmation", "Order 55120, two shirts, delivered on 3 November."),
)

_DOMAIN_VERSIONS = {"travel": "4", "it": "2026-09", "hr": "2026.2", "returns": "7", "security": "3",
                    "workplace": "1"}


# ---------------------------------------------------------------------------------------------
# Knowledge-base objects and claim wording
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KBPassage:
    """A knowledge-base section: what retrieval puts in a prompt, and the claims it supports."""

    pid: str
    domain: str
    source: str
    text: str
    question: str
    claims: tuple[Claim, ...]
    wrong: tuple[str, ...]


@dataclass(frozen=True)
class Claim:
    """A fact of one passage, worded by where that passage sits (see the module docstring)."""

    pid: str
    paraphrases: tuple[str, ...]
    ordinal: int = 0

    def text(self, key: tuple[str, int | None]) -> str:
        return _variants(self.paraphrases, self.ordinal)[_SINGLE_KEYS.index(key)]


@dataclass(frozen=True)
class JointClaim:
    """A sentence that needs passages `a` and `b` together; worded by their two positions."""

    a: str
    b: str
    paraphrases: tuple[str, ...]
    ordinal: int = 0

    def text(self, positions: tuple[int, int]) -> str:
        return _variants(self.paraphrases, self.ordinal)[_JOINT_KEYS.index(positions)]


def _decap(sentence: str) -> str:
    """Lower-case the first letter for a lead-in, unless the first word is an acronym."""
    first = sentence.split(" ", 1)[0]
    if sum(ch.isupper() for ch in first) > 1:
        return sentence
    return sentence[:1].lower() + sentence[1:]


@cache
def _variants(paraphrases: tuple[str, ...], ordinal: int) -> tuple[str, ...]:
    """Plain paraphrases first (the most frequent keys get them), then lead-in rewordings.

    The lead-ins rotate by the claim's ordinal, so claims sharing a position in one answer do
    not all start with the same words.
    """
    out = list(paraphrases)
    for i in range(len(PREFIXES)):
        prefix = PREFIXES[(i + ordinal) % len(PREFIXES)]
        for j in range(len(paraphrases)):
            out.append(prefix + _decap(paraphrases[(i + j) % len(paraphrases)]))
    return tuple(out)


def _build_kb() -> tuple[dict[str, KBPassage], dict[str, list[KBPassage]], tuple[JointClaim, ...]]:
    passages: dict[str, KBPassage] = {}
    by_domain: dict[str, list[KBPassage]] = {}
    ordinal = 0
    for domain, pid, source, text, question, claims, wrong in _KB_ROWS:
        built = []
        for c in claims:
            built.append(Claim(pid, tuple(c), ordinal))
            ordinal += 1
        passage = KBPassage(pid, domain, source, text, question, tuple(built), tuple(wrong))
        passages[pid] = passage
        by_domain.setdefault(domain, []).append(passage)
    joints = tuple(JointClaim(a, b, tuple(p), i) for i, (a, b, p) in enumerate(_JOINT_ROWS))
    for claim in (c for p in passages.values() for c in p.claims):
        if len(_variants(claim.paraphrases, claim.ordinal)) < len(_SINGLE_KEYS):
            raise ValueError(f"sample knowledge base: claim {claim.paraphrases[0]!r} needs more paraphrases")
    return passages, by_domain, joints


PASSAGES, _BY_DOMAIN, JOINTS = _build_kb()
_JOINTS_OF: dict[str, list[JointClaim]] = {}
for _joint in JOINTS:
    _JOINTS_OF.setdefault(_joint.a, []).append(_joint)
    _JOINTS_OF.setdefault(_joint.b, []).append(_joint)

# ---------------------------------------------------------------------------------------------
# Generated data
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExpectedSentence:
    """What the generator meant one sentence to be: its judge text, labels, kind and verdict."""

    text: str
    labels: tuple[str, ...]
    kind: str
    verdict: str
    check_worthy: bool
    supported_by: tuple[str, ...] = ()
    jointly_supported_by: tuple[tuple[str, ...], ...] = ()


@dataclass
class Sample:
    """Generated traffic: valid turns, broken JSONL lines, and recorded judgments for every sentence.

    `expected[turn_id]` lists each sentence as the parser should see it, with the failure kind it
    was drawn as and the verdict a correct pipeline gives it. `malformed_at[i]` is the time the
    i-th broken line belongs to (interleaving and day assignment); `malformed_kinds[i]` its defect.
    """

    turns: list[dict[str, Any]]
    malformed_lines: list[str]
    judgments: list[dict[str, Any]]
    expected: dict[str, tuple[ExpectedSentence, ...]] = field(default_factory=dict)
    malformed_kinds: list[str] = field(default_factory=list)
    malformed_at: list[str] = field(default_factory=list)


@dataclass
class _Sent:
    """One sentence being built: its words, labels and what supports it in this turn."""

    body: str
    kind: str
    labels: list[str] = field(default_factory=list)
    supported_by: tuple[str, ...] = ()
    joint: tuple[str, ...] = ()
    check_worthy: bool = True
    citations: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Conversation:
    conversation_id: str
    attributes: dict[str, str]
    contexts: list[list[KBPassage]] = field(default_factory=list)
    max_label: int = 0


def _pick(rng: random.Random, weighted: Sequence[tuple[str, float]]) -> str:
    return rng.choices([k for k, _ in weighted], weights=[w for _, w in weighted])[0]


def _label_key(label: str) -> tuple[str, int]:
    return (label[0], int(label[1:]))


def _attributes(rng: random.Random) -> dict[str, str]:
    return {"model": _pick(rng, _MODELS), "prompt_version": _pick(rng, _PROMPTS),
            "product": _pick(rng, _PRODUCTS), "locale": _pick(rng, _LOCALES)}


def marker_style(attributes: dict[str, str]) -> str:
    """The marker habit of a model and prompt: one style per turn, set by its attributes."""
    if attributes.get("model") == "assistant-c":
        return "comma"
    if attributes.get("model") == "assistant-b" and attributes.get("prompt_version") == "p2":
        return "after_stop"
    return "adjacent"


def _retrieve(rng: random.Random, primary: KBPassage, size: int) -> list[KBPassage]:
    """A context set in prompt order: the asked-about passage near the top, neighbours, distractors."""
    same = [p for p in _BY_DOMAIN[primary.domain] if p is not primary]
    partners = [PASSAGES[j.b if j.a == primary.pid else j.a] for j in _JOINTS_OF.get(primary.pid, [])]
    rng.shuffle(same)
    if partners and rng.random() < 0.6:
        first = rng.choice(partners)
        same.remove(first)
        same.insert(0, first)
    n_same = min(len(same), rng.randint(1, max(1, size - 2)))
    others = [p for p in PASSAGES.values() if p.domain != primary.domain]
    chosen = same[:n_same] + rng.sample(others, size - 1 - n_same)
    rest = sorted(chosen, key=lambda p: (p.domain != primary.domain) + rng.random() * 1.5)
    position = rng.choices(range(min(4, size)), weights=(55, 25, 12, 8)[:min(4, size)])[0]
    rest.insert(position, primary)
    return rest


def _labels_of(context: Sequence[KBPassage]) -> dict[str, str]:
    return {p.pid: f"S{i + 1}" for i, p in enumerate(context)}


def _claim_sent(claim: Claim, context: Sequence[KBPassage], kind: str, labels: list[str]) -> _Sent:
    """A claim worded for where its passage sits in this context set (absent = unsupported here)."""
    where = _labels_of(context).get(claim.pid)
    key = ("S", int(where[1:])) if where else ("S", None)
    return _Sent(claim.text(key), kind, labels, supported_by=(where,) if where else ())


def _draw_claims(rng: random.Random, primary: KBPassage, context: Sequence[KBPassage], n: int) -> list[Claim]:
    """Distinct claims an answer talks about: mostly the asked-about passage, some neighbours."""
    neighbours = [p for p in context if p.domain == primary.domain and p is not primary]
    pool = list(primary.claims)
    rng.shuffle(pool)
    extra = [c for p in neighbours for c in p.claims]
    rng.shuffle(extra)
    take_primary = min(len(pool), max(1, round(n * 0.75)))
    claims = pool[:take_primary] + extra[:n - take_primary]
    return claims[:n]


def _marker_sentences(rng: random.Random, conv: _Conversation, context: list[KBPassage], primary: KBPassage,
                      force_stale: bool) -> list[_Sent]:
    """The check-worthy sentences of a markers answer, each drawn as one failure kind."""
    weights = _KIND_WEIGHTS[conv.attributes["model"]]
    n = rng.choices((1, 2, 3, 4, 5, 6), weights=(15, 25, 25, 18, 10, 7))[0]
    claims = _draw_claims(rng, primary, context, n)
    labels = _labels_of(context)
    prev = conv.contexts[-1] if conv.contexts else None
    sents: list[_Sent] = []
    for i, claim in enumerate(claims):
        stale_here = force_stale and prev is not None and i == len(claims) - 1
        kind = "stale_label" if stale_here else _pick(rng, list(weights.items()))
        sent = _realise(rng, kind, claim, context, labels, prev, conv)
        if sent is None or sent.body in {s.body for s in sents}:
            sent = _claim_sent(claim, context, "supported", [labels[claim.pid]])
        sents.append(sent)
    return sents


def _realise(rng: random.Random, kind: str, claim: Claim, context: list[KBPassage], labels: dict[str, str],
             prev: list[KBPassage] | None, conv: _Conversation) -> _Sent | None:
    """One sentence of the given kind about `claim`, or None when this context cannot host it."""
    right = labels[claim.pid]
    others = [lab for pid, lab in labels.items() if pid != claim.pid]
    if kind == "supported":
        return _claim_sent(claim, context, kind, [right])
    if kind == "duplicate_marker":
        return _claim_sent(claim, context, kind, [right, right])
    if kind == "padded":
        pads = rng.sample(others, 2 if len(others) >= 2 and rng.random() < 0.25 else 1)
        return _claim_sent(claim, context, kind, [right, *pads] if rng.random() < 0.7 else [*pads, right])
    if kind == "miscited":
        return _claim_sent(claim, context, kind, [rng.choice(others)])
    if kind == "uncited":
        return _claim_sent(claim, context, kind, [])
    if kind == "unknown_label":
        ghost = f"S{rng.randint(max(conv.max_label, len(context)) + 1, 9)}"
        return _claim_sent(claim, context, kind, [ghost] if rng.random() < 0.5 else [right, ghost])
    if kind == "unsupported":
        return _unsupported(rng, claim, context, right)
    if kind == "joint":
        return _joint(rng, context, labels)
    if kind == "stale_label" and prev is not None:
        return _stale(rng, context, prev)
    return None


def _unsupported(rng: random.Random, claim: Claim, context: list[KBPassage], right: str) -> _Sent:
    """A wrong detail on the topic, or a true policy fact from a passage this prompt did not have."""
    passage = PASSAGES[claim.pid]
    cite = [right] if rng.random() < 0.75 else []
    absent = [p for p in _BY_DOMAIN[passage.domain] if p not in context]
    if absent and rng.random() < 0.25:
        outside = rng.choice(rng.choice(absent).claims)
        return _claim_sent(outside, context, "unsupported", cite)
    return _Sent(rng.choice(passage.wrong), "unsupported", cite)


def _joint(rng: random.Random, context: list[KBPassage], labels: dict[str, str]) -> _Sent | None:
    options = [j for j in JOINTS if j.a in labels and j.b in labels
               and int(labels[j.a][1:]) <= 4 and int(labels[j.b][1:]) <= 4]
    if not options:
        return None
    joint = rng.choice(options)
    la, lb = labels[joint.a], labels[joint.b]
    cited = sorted((la, lb), key=_label_key)
    return _Sent(joint.text((int(la[1:]), int(lb[1:]))), "joint", cited, joint=tuple(cited))


def _stale(rng: random.Random, context: list[KBPassage], prev: list[KBPassage]) -> _Sent | None:
    """Cite a label that named a passage of the previous turn's context but names nothing now."""
    slots = [k for k in range(len(context) + 1, len(prev) + 1) if prev[k - 1] not in context]
    if not slots:
        return None
    k = rng.choice(slots)
    claim = rng.choice(prev[k - 1].claims)
    return _claim_sent(claim, context, "stale_label", [f"S{k}"])


def _tail(rng: random.Random, domain: str, labels: Sequence[str] = ()) -> list[_Sent]:
    """Sentences that are not claims: questions to the user and offers (a few carry a marker)."""
    out: list[_Sent] = []
    if rng.random() < 0.08:
        out.append(_Sent(rng.choice(_USER_QUESTIONS_BY_DOMAIN[domain]), "question", check_worthy=False))
    if rng.random() < 0.3:
        cite = [rng.choice(labels)] if labels and rng.random() < 0.06 else []
        out.append(_Sent(rng.choice(OFFERS), "offer", cite, check_worthy=False))
    return out


def _render_marker(labels: Sequence[str], style: str) -> str:
    if style == "comma":
        return "[" + ", ".join(labels) + "]"
    return "".join(f"[{lab}]" for lab in labels)


def _render(sent: _Sent, style: str) -> str:
    """The sentence as the assistant wrote it: markers before the stop, or after it."""
    if not sent.labels:
        return sent.body
    marker = _render_marker(sent.labels, style)
    if style == "after_stop" or sent.body[-1] not in ".?!":
        return f"{sent.body} {marker}"
    return f"{sent.body[:-1]} {marker}{sent.body[-1]}"


def _assemble(rng: random.Random, claims: list[_Sent], tail: list[_Sent], style: str, bullets: bool,
              bullet_stops: bool) -> str:
    """Join sentences into answer text: prose (sometimes two paragraphs) or a bullet list."""
    if bullets:
        if not bullet_stops:
            for sent in claims:
                sent.body = sent.body.rstrip(".")
        lines = ["- " + _render(s, style) for s in claims]
        if tail:
            lines.append(" ".join(_render(s, style) for s in tail))
        return "\n".join(lines)
    parts = [_render(s, style) for s in claims + tail]
    if len(parts) >= 4 and rng.random() < 0.2:
        cut = rng.randint(2, len(parts) - 1)
        return " ".join(parts[:cut]) + "\n\n" + " ".join(parts[cut:])
    return " ".join(parts)


def _context_json(context: Sequence[KBPassage]) -> list[dict[str, str]]:
    return [{"label": f"S{i + 1}", "source": p.source, "text": p.text, "document_id": p.pid,
             "version": _DOMAIN_VERSIONS[p.domain]} for i, p in enumerate(context)]


def _marker_turn(rng: random.Random, conv: _Conversation, primary: KBPassage, question: str,
                 force_stale: bool = False) -> tuple[dict[str, Any], list[_Sent]]:
    """A markers-format turn: retrieve a context set, write the answer, remember its labels."""
    prev = conv.contexts[-1] if conv.contexts else None
    if force_stale:
        size = 3 if prev is not None else rng.choice((5, 6))
    else:
        size = rng.choices((3, 4, 5, 6), weights=(25, 35, 25, 15))[0]
        if prev is not None and rng.random() < 0.4:
            size = max(3, len(prev) - rng.randint(1, 2))
    context = _retrieve(rng, primary, size)
    claims = _marker_sentences(rng, conv, context, primary, force_stale)
    tail = _tail(rng, primary.domain, [f"S{i + 1}" for i in range(len(context))])
    attrs = conv.attributes
    bullets = rng.random() < (0.45 if attrs["product"] == "helpdesk-bot" else 0.1) and len(claims) >= 2
    answer = _assemble(rng, claims, tail, marker_style(attrs), bullets, attrs["model"] != "assistant-b")
    _remember(conv, context)
    turn = {"question": question, "answer": answer, "answer_format": "markers",
            "context": _context_json(context), "attributes": dict(attrs)}
    return turn, claims + tail


def _remember(conv: _Conversation, context: list[KBPassage]) -> None:
    conv.contexts.append(context)
    conv.max_label = max(conv.max_label, len(context))


def _refusal_turn(rng: random.Random, conv: _Conversation, question: str, domain: str
                  ) -> tuple[dict[str, Any], list[_Sent]]:
    """A question the knowledge base cannot answer: context of near misses, a refusal, maybe an offer."""
    context = rng.sample(_BY_DOMAIN[domain], min(len(_BY_DOMAIN[domain]), rng.randint(3, 4)))
    sents = [_Sent(rng.choice(REFUSAL_SENTENCES), "refusal", check_worthy=False)]
    if rng.random() < 0.5:
        sents.append(_Sent(rng.choice(_REFUSAL_OFFERS), "offer", check_worthy=False))
    _remember(conv, context)
    turn = {"question": question, "answer": " ".join(s.body for s in sents), "answer_format": "markers",
            "context": _context_json(context), "attributes": dict(conv.attributes)}
    return turn, sents


# ---------------------------------------------------------------------------------------------
# Provider-native (Anthropic char_location) turns
# ---------------------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")


def _passage_spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans of a passage, end including the trailing space as the API reports it."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in re.finditer(r"[.!?] +(?=[A-Z])", text):
        spans.append((start, match.end()))
        start = match.end()
    spans.append((start, len(text)))
    return spans


def _best_span(text: str, sentence: str) -> tuple[int, int]:
    words = set(_WORD.findall(sentence.lower()))
    spans = _passage_spans(text)
    return max(spans, key=lambda s: len(words & set(_WORD.findall(text[s[0]:s[1]].lower()))))


def _citation(docs: Sequence[tuple[str, str]], index: int, sentence: str) -> dict[str, Any]:
    title, text = docs[index]
    start, end = _best_span(text, sentence)
    return {"type": "char_location", "cited_text": text[start:end], "document_index": index,
            "document_title": title, "start_char_index": start, "end_char_index": end}


def _broken_citation(rng: random.Random, docs: Sequence[tuple[str, str]], index: int, sentence: str
                     ) -> dict[str, Any]:
    """A pointer that does not match the logged documents: bad index, wrong title or shifted span."""
    citation = _citation(docs, index, sentence)
    problem = rng.choice(("out_of_range", "off_by_one", "shifted_span"))
    if problem == "out_of_range":
        citation["document_index"] = len(docs) + rng.randint(0, 2)
    elif problem == "off_by_one":
        citation["document_index"] = index - 1 if index > 0 else index + 1
    else:
        citation["start_char_index"] += 3
        citation["end_char_index"] = min(citation["end_char_index"] + 3, len(docs[index][1]))
    return citation


def _native_sentences(rng: random.Random, docs: list[tuple[str, str]], passages: dict[int, KBPassage],
                      primary: KBPassage) -> list[_Sent]:
    """Claims with native citations, each drawn as one of the kinds a native answer can show."""
    context = [p for _, p in sorted(passages.items())]
    index_of = {p.pid: i for i, p in passages.items()}
    n = rng.choices((1, 2, 3, 4, 5), weights=(15, 30, 30, 15, 10))[0]
    sents: list[_Sent] = []
    for claim in _draw_claims(rng, primary, context, n):
        kind = _pick(rng, list(_NATIVE_KIND_WEIGHTS.items()))
        here = index_of[claim.pid]
        other = rng.choice([i for i in index_of.values() if i != here])
        sent = _Sent(claim.text(("D", here)), kind, supported_by=(f"D{here}",))
        if kind == "unsupported":
            sent = _Sent(rng.choice(PASSAGES[claim.pid].wrong), kind)
        targets = {"supported": [here], "padded": [here, other], "miscited": [other], "uncited": [],
                   "unsupported": [here], "pointer_problem": [here]}[kind]
        for t in targets:
            if kind == "pointer_problem":
                sent.citations.append(_broken_citation(rng, docs, t, sent.body))
            else:
                sent.citations.append(_citation(docs, t, sent.body))
        sent.labels = [f"D{c['document_index']}" for c in sent.citations]
        sents.append(sent)
    return sents


def _native_blocks(sents: list[_Sent]) -> list[dict[str, Any]]:
    """Content blocks as the API returns them: the cited text, then its stop in a plain block."""
    blocks: list[dict[str, Any]] = []
    for i, sent in enumerate(sents):
        gap = "" if i == len(sents) - 1 else " "
        if sent.citations:
            blocks.append({"type": "text", "text": sent.body[:-1], "citations": sent.citations})
            blocks.append({"type": "text", "text": sent.body[-1] + gap})
        else:
            blocks.append({"type": "text", "text": sent.body + gap})
    return blocks


def _native_turn(rng: random.Random, conv: _Conversation, primary: KBPassage, question: str
                 ) -> tuple[dict[str, Any], list[_Sent]]:
    """An `anthropic_blocks` turn: request documents (maybe a user upload first) and cited blocks."""
    docs: list[tuple[str, str]] = []
    if rng.random() < 0.3:
        docs.append(rng.choice(_UPLOADS))
    context = _retrieve(rng, primary, rng.randint(3, _MAX_NATIVE_PASSAGES))
    passages = {len(docs) + i: p for i, p in enumerate(context)}
    docs.extend((p.source, p.text) for p in context)
    sents = _native_sentences(rng, docs, passages, primary) + _tail(rng, primary.domain)
    conv.contexts.append(context)
    turn = {"question": question, "answer": "", "answer_format": "anthropic_blocks",
            "answer_blocks": _native_blocks(sents),
            "request_documents": [{"title": t, "text": x} for t, x in docs],
            "attributes": dict(conv.attributes)}
    return turn, sents


# ---------------------------------------------------------------------------------------------
# Expected verdicts (the generator's own truth, independent of any judge)
# ---------------------------------------------------------------------------------------------


def _resolved(sent: _Sent, turn: dict[str, Any]) -> list[str]:
    if turn["answer_format"] == "anthropic_blocks":
        docs = turn["request_documents"]
        return [f"D{c['document_index']}" for c in sent.citations if _pointer_ok(c, docs)]
    known = {p["label"] for p in turn["context"]}
    return [lab for lab in dict.fromkeys(sent.labels) if lab in known]


def _pointer_ok(citation: dict[str, Any], docs: Sequence[dict[str, str]]) -> bool:
    index = citation["document_index"]
    if not 0 <= index < len(docs) or docs[index]["title"] != citation["document_title"]:
        return False
    text = docs[index]["text"][citation["start_char_index"]:citation["end_char_index"]]
    return text.strip() == citation["cited_text"].strip()


def _expected(sent: _Sent, turn: dict[str, Any]) -> ExpectedSentence:
    """The verdict a correct pipeline gives this sentence, from what the generator knows."""
    labels = tuple(dict.fromkeys(sent.labels))
    joint = (sent.joint,) if sent.joint else ()
    if not sent.check_worthy:
        verdict = "not_check_worthy"
    else:
        resolved = set(_resolved(sent, turn))
        cited = bool(resolved & set(sent.supported_by)) or bool(sent.joint and set(sent.joint) <= resolved)
        if cited:
            verdict = "supported"
        elif sent.supported_by or sent.joint:
            verdict = "miscited" if resolved else "uncited_supported"
        else:
            verdict = "unsupported"
    return ExpectedSentence(sent.body, labels, sent.kind, verdict, sent.check_worthy,
                            tuple(sent.supported_by), joint)


# ---------------------------------------------------------------------------------------------
# Days, conversations, FAQ traffic, malformed lines
# ---------------------------------------------------------------------------------------------


def _stamp(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _follow_up_question(rng: random.Random, passage: KBPassage) -> str:
    """A follow-up as users type it: the next question, sometimes with a lead-in."""
    question = passage.question
    if question.startswith("I "):
        return rng.choice(("", "Thanks. ")) + question
    lead = rng.choice(("", "Thanks. ", "And ", "One more thing: "))
    if lead in ("And ", "One more thing: "):
        question = question[:1].lower() + question[1:]
    return lead + question


def _next_primary(rng: random.Random, previous: KBPassage) -> KBPassage:
    if rng.random() < 0.8:
        return rng.choice([p for p in _BY_DOMAIN[previous.domain] if p is not previous])
    return rng.choice(list(PASSAGES.values()))


@dataclass
class _DayTurn:
    turn: dict[str, Any]
    sents: list[_Sent]
    moment: dt.datetime


def _conversation(rng: random.Random, conv_id: str, start: dt.datetime, length: int, *,
                  native: bool = False, force_stale: bool = False) -> list[_DayTurn]:
    """The turns of one chat: a first question, then follow-ups a few minutes apart."""
    conv = _Conversation(conv_id, _attributes(rng))
    moment = start
    primary = rng.choice(list(PASSAGES.values()))
    out: list[_DayTurn] = []
    for index in range(1, length + 1):
        if native:
            turn, sents = _native_turn(rng, conv, primary, primary.question)
        elif not force_stale and rng.random() < (0.04 if index == 1 else 0.02):
            domain, question = rng.choice(_REFUSAL_QUESTIONS)
            turn, sents = _refusal_turn(rng, conv, question, domain)
        else:
            question = primary.question if index == 1 else _follow_up_question(rng, primary)
            turn, sents = _marker_turn(rng, conv, primary, question, force_stale)
        out.append(_DayTurn(_identify(turn, conv_id, index, moment), sents, moment))
        moment += dt.timedelta(seconds=rng.randint(40, 600) if not force_stale else rng.randint(480, 840))
        primary = _next_primary(rng, primary)
    return out


def _identify(turn: dict[str, Any], conv_id: str, index: int, moment: dt.datetime) -> dict[str, Any]:
    head = {"turn_id": f"{conv_id}-t{index}", "conversation_id": conv_id, "turn_index": index,
            "answered_at": _stamp(moment)}
    return head | turn


@cache
def _faq_pool(seed: int) -> tuple[tuple[dict[str, Any], tuple[_Sent, ...]], ...]:
    """Answers that real traffic repeats word for word (FAQ questions answered the same way)."""
    rng = random.Random(f"citecheck-sample:{seed}:faq")
    pool = []
    for k in range(12):
        conv = _Conversation(f"faq-{k}", _attributes(rng))
        primary = rng.choice(list(PASSAGES.values()))
        turn, sents = _marker_turn(rng, conv, primary, primary.question)
        pool.append((turn, tuple(sents)))
    return tuple(pool)


def _start_time(rng: random.Random, day: dt.date) -> dt.datetime:
    hour = rng.choices(range(24), weights=_HOUR_WEIGHTS)[0]
    base = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
    return base + dt.timedelta(hours=hour, seconds=rng.randint(0, 3599))


def _day(seed: int, day: dt.date, turns_per_day: int) -> list[_DayTurn]:
    """Every turn of the conversations that start on `day` (some answer after midnight)."""
    rng = random.Random(f"citecheck-sample:{seed}:{day.isoformat()}")
    prefix = f"conv-{day:%Y%m%d}"
    base = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
    late = base + dt.timedelta(hours=23, minutes=53, seconds=rng.randint(0, 240))
    out = _conversation(rng, f"{prefix}-0000", late, 2 if turns_per_day > 1 else 1, force_stale=True)
    k = 1
    while len(out) < turns_per_day:
        conv_id = f"{prefix}-{k:04d}"
        start = _start_time(rng, day)
        roll = rng.random()
        if roll < 0.08:
            out.append(_faq_turn(rng, seed, conv_id, start))
        else:
            length = rng.choices((1, 2, 3, 4), weights=(60, 25, 10, 5))[0]
            length = min(length, turns_per_day - len(out))
            out.extend(_conversation(rng, conv_id, start, length, native=roll < 0.15 and length == 1))
        k += 1
    return out[:turns_per_day]


def _faq_turn(rng: random.Random, seed: int, conv_id: str, start: dt.datetime) -> _DayTurn:
    turn, sents = rng.choice(_faq_pool(seed))
    copy = json.loads(json.dumps(turn))
    return _DayTurn(_identify(copy, conv_id, 1, start), [_Sent(**vars(s)) for s in sents], start)


def _malformed(seed: int, day: dt.date, count: int) -> list[tuple[str, str, str]]:
    """(line, kind, time) for broken JSONL lines, each broken in one distinct way."""
    rng = random.Random(f"citecheck-sample:{seed}:{day.isoformat()}:malformed")
    out = []
    for j in range(count):
        kind = MALFORMED_KINDS[(day.toordinal() * count + j) % len(MALFORMED_KINDS)]
        start = _start_time(rng, day)
        native = kind == "native_without_documents"
        (base,) = _conversation(rng, f"bad-{day:%Y%m%d}-{j:03d}", start, 1, native=native)
        out.append((_break(rng, base.turn, kind), kind, _stamp(start)))
    return out


def _break(rng: random.Random, turn: dict[str, Any], kind: str) -> str:
    data = json.loads(json.dumps(turn))
    if kind == "truncated_json":
        line = json.dumps(data, ensure_ascii=False)
        return line[: rng.randint(len(line) // 4, len(line) // 2)]
    if kind == "python_repr":
        return repr(data)
    if kind == "not_an_object":
        return json.dumps([data], ensure_ascii=False)
    if kind == "missing_turn_id":
        del data["turn_id"]
    elif kind == "empty_turn_id":
        data["turn_id"] = ""
    elif kind == "context_not_list":
        data["context"] = " ".join(p["text"] for p in data["context"])
    elif kind == "answer_not_string":
        data["answer"] = [data["answer"]]
    elif kind == "passage_without_label":
        del data["context"][rng.randrange(len(data["context"]))]["label"]
    elif kind == "unknown_answer_format":
        data["answer_format"] = "html"
    elif kind == "native_without_documents":
        del data["request_documents"]
    return json.dumps(data, ensure_ascii=False)


def generate(start: dt.date, days: int, turns_per_day: int = 300, seed: int = 0) -> Sample:
    """Turns answered on `days` days from `start` (UTC), broken lines (~1%) and their judgments."""
    if days < 1 or turns_per_day < 1:
        raise ValueError("days and turns_per_day must be at least 1")
    first = dt.datetime(start.year, start.month, start.day, tzinfo=dt.UTC)
    end = first + dt.timedelta(days=days)
    built: list[_DayTurn] = []
    for offset in range(-1, days):
        for item in _day(seed, start + dt.timedelta(days=offset), turns_per_day):
            if first <= item.moment < end:
                built.append(item)
    built.sort(key=lambda t: (t.turn["answered_at"], t.turn["turn_id"]))
    expected: dict[str, tuple[ExpectedSentence, ...]] = {}
    for item in built:
        expected[item.turn["turn_id"]] = tuple(_expected(s, item.turn) for s in item.sents)
    malformed = [m for offset in range(days) for m in _malformed(
        seed, start + dt.timedelta(days=offset), max(1, round(turns_per_day * 0.01)))]
    malformed.sort(key=lambda m: m[2])
    return Sample(
        turns=[item.turn for item in built],
        malformed_lines=[m[0] for m in malformed],
        judgments=_judgments(expected.values()),
        expected=expected,
        malformed_kinds=[m[1] for m in malformed],
        malformed_at=[m[2] for m in malformed],
    )


# ---------------------------------------------------------------------------------------------
# Judgments and files
# ---------------------------------------------------------------------------------------------


def _row(text: str, supported_by: Iterable[str], joint: Iterable[Sequence[str]] = ()) -> dict[str, Any]:
    row: dict[str, Any] = {"statement": text, "supported_by": sorted(supported_by, key=_label_key)}
    joint = [sorted(j, key=_label_key) for j in joint]
    if joint:
        row["jointly_supported_by"] = joint
    return row


def _judgments(turns: Iterable[Sequence[ExpectedSentence]]) -> list[dict[str, Any]]:
    """One row per distinct sentence text, in order of first appearance."""
    rows: dict[str, dict[str, Any]] = {}
    for sentences in turns:
        for s in sentences:
            row = _row(s.text, s.supported_by, s.jointly_supported_by)
            seen = rows.setdefault(s.text, row)
            if seen != row:
                raise AssertionError(f"sample generator: conflicting judgments for {s.text!r}")
    return list(rows.values())


def judge_spec(sample: Sample) -> dict[str, Any]:
    """A recorded judge (SPEC §4) covering every sentence of the sample's valid turns."""
    return {"kind": "recorded", "about": "citecheck bundled sample data (generated)",
            "judgments": sample.judgments}


@cache
def _all_rows() -> tuple[tuple[str, tuple[str, ...], tuple[tuple[str, ...], ...]], ...]:
    rows: list[tuple[str, tuple[str, ...], tuple[tuple[str, ...], ...]]] = []
    for passage in PASSAGES.values():
        for claim in passage.claims:
            for key in _SINGLE_KEYS:
                support = () if key[1] is None else (f"{key[0]}{key[1]}",)
                rows.append((claim.text(key), support, ()))
        rows.extend((w, (), ()) for w in passage.wrong)
    for joint in JOINTS:
        for a, b in _JOINT_KEYS:
            rows.append((joint.text((a, b)), (), (tuple(sorted((f"S{a}", f"S{b}"), key=_label_key)),)))
    with_bare = rows + [(t.rstrip("."), s, j) for t, s, j in rows if t.endswith(".")]
    fixed = [(t, (), ()) for t in REFUSAL_SENTENCES + OFFERS + USER_QUESTIONS]
    return tuple(with_bare + fixed)


def full_judge_spec() -> dict[str, Any]:
    """A recorded judge covering every sentence the generator can write, for any dates and seed."""
    about = "citecheck bundled sample data: every statement the generator can write"
    return {"kind": "recorded", "about": about, "judgments": [_row(t, s, j) for t, s, j in _all_rows()]}


def write_turns_jsonl(sample: Sample, path: str | Path, include_malformed: bool = True) -> int:
    """Write turns as JSON Lines, broken lines interleaved at their time. Returns lines written."""
    lines = [(t["answered_at"], 0, json.dumps(t, ensure_ascii=False)) for t in sample.turns]
    if include_malformed:
        broken = zip(sample.malformed_at, sample.malformed_lines, strict=True)
        lines += [(at, 1, line) for at, line in broken]
    lines.sort(key=lambda x: (x[0], x[1]))
    with open(path, "w", encoding="utf-8") as handle:
        for _, _, line in lines:
            handle.write(line + "\n")
    return len(lines)


def write_judge(sample: Sample, path: str | Path) -> None:
    """Write the recorded judge file for the sample."""
    text = json.dumps(judge_spec(sample), ensure_ascii=False, indent=1)
    Path(path).write_text(text + "\n", encoding="utf-8")


def config_toml() -> str:
    """A run configuration for the sample: its refusal sentences as check-worthiness rules."""
    refusals = ", ".join(json.dumps(r, ensure_ascii=False) for r in REFUSAL_SENTENCES)
    return ("# citecheck configuration for the bundled sample data\n"
            f"[check_worthiness]\nrefusals = [{refusals}]\n")
