import { CopyLink } from './copy-link.tsx';
import { ShareButton } from './share-button.tsx';

/** Issue 11 item 11: the address that opens /register with the code already filled in. */
export function inviteLink(key: string, origin = window.location.origin): string {
  return `${origin}/register?invite=${encodeURIComponent(key)}`;
}

/** A freshly made invite key: Copy (the key) and Share (the invite link), ready to hand out from a phone. */
export function InviteKeyRow({ inviteKey, siteName }: { inviteKey: string; siteName: string }) {
  const link = inviteLink(inviteKey);
  return (
    <li className="invite-key-row">
      <code className="invite-key-value">{inviteKey}</code>
      <span className="invite-key-actions">
        <CopyLink url={inviteKey} asButton>
          Copy
        </CopyLink>
        <ShareButton
          url={link}
          title={`Invite to ${siteName}`}
          text={`You are invited to ${siteName}. Register with this invite:`}
          ariaLabel={`Share invite ${inviteKey}`}
        />
      </span>
      <a className="invite-key-link" href={link}>
        {link}
      </a>
    </li>
  );
}
