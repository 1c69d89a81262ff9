import { useTranslation } from 'react-i18next';

import type { DisplayPattern } from './labels';

interface PatternListProps {
  patterns: readonly DisplayPattern[];
  readOnly: boolean;
  onEdit: (pattern: DisplayPattern) => void;
  onDelete: (pattern: DisplayPattern) => void;
  onShow: (pattern: DisplayPattern) => void;
}

export function PatternList({ patterns, readOnly, onEdit, onDelete, onShow }: PatternListProps) {
  const { t } = useTranslation();
  return (
    <section className="patterns card" aria-labelledby="patterns-heading">
      <h2 id="patterns-heading">{t('patterns.heading', { count: patterns.length })}</h2>
      {patterns.length === 0 ? (
        <p className="muted">{t('patterns.empty')}</p>
      ) : (
        <ol className="pattern-list" data-testid="pattern-list">
          {patterns.map((pattern) => {
            const name = t('workspace.patternNumber', { number: pattern.number });
            return (
              <li key={pattern.id} data-testid="pattern-item" className="pattern-item">
                <button
                  type="button"
                  className={`chip pc-${pattern.colour}${pattern.pending ? ' pending' : ''}`}
                  onClick={() => onShow(pattern)}
                  title={t('patterns.show')}
                >
                  {name}
                </button>
                <span className="pattern-description">{pattern.description}</span>
                <span className="muted pattern-meta">
                  {t(`labels.${pattern.kind}`)} ·{' '}
                  {t('patterns.covers', { count: pattern.prefix_ranks.length })}
                  {pattern.pending && ` · ${t('patterns.pending')}`}
                </span>
                {!readOnly && (
                  <span className="pattern-actions">
                    <button
                      type="button"
                      aria-label={t('patterns.editNamed', { name })}
                      onClick={() => onEdit(pattern)}
                    >
                      {t('patterns.edit')}
                    </button>
                    <button
                      type="button"
                      aria-label={t('patterns.deleteNamed', { name })}
                      onClick={() => onDelete(pattern)}
                    >
                      {t('patterns.delete')}
                    </button>
                  </span>
                )}
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}
