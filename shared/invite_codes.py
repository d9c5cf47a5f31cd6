"""What an invitation code looks like, as the device and the server both check it: the prefix
the server writes before 128 CSPRNG bits (server/invites/) and the longest code either accepts
(client/invitation.py reads a typed or pasted code by these; the page's js/invite.js has the
same two values)."""

PREFIX = "inv_"
MAX_CODE_LENGTH = 64
