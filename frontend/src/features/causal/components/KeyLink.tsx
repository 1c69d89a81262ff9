import { useTranslation } from 'react-i18next';
import { Link } from 'react-router-dom';

import { keyIdOf } from '../lib/results';
import type { KeyIds } from '../lib/results';

/**
 * A key a result names, "L3 · key 400": a link to its annotation page (the curator's
 * adjudication screen) where the study mined it, plain text where it did not (a random
 * control key, a key of a layer that was not sampled).
 */
export function KeyLink({
  layer,
  index,
  keyIds,
}: {
  layer: number;
  index: number;
  keyIds: KeyIds;
}) {
  const { t } = useTranslation();
  const name = t('causal.key', { layer, index });
  const id = keyIdOf(keyIds, layer, index);
  if (id === null) {
    return (
      <span className="causal-key" data-testid="causal-key">
        {name}
      </span>
    );
  }
  return (
    <Link to={`/manage/review/keys/${id}`} className="causal-key" data-testid="causal-key-link">
      {name}
    </Link>
  );
}

/** A list of keys, each as a KeyLink; past `limit` of them, how many more there are. */
export function KeyList({
  keys,
  keyIds,
  limit = 200,
}: {
  keys: readonly (readonly [number, number])[];
  keyIds: KeyIds;
  limit?: number;
}) {
  const { t } = useTranslation();
  return (
    <p className="key-list">
      {keys.slice(0, limit).map(([layer, index], i) => (
        <span key={`${layer}:${index}`}>
          {i > 0 && ', '}
          <KeyLink layer={layer} index={index} keyIds={keyIds} />
        </span>
      ))}
      {keys.length > limit && (
        <span className="muted"> {t('causal.moreKeys', { count: keys.length - limit })}</span>
      )}
    </p>
  );
}
