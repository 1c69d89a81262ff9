import { useRef, useState } from 'react';
import type { FormEvent, KeyboardEvent, ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

import { CAUSAL_KINDS } from '../../../api/causal';
import type { CausalJob, CausalKind } from '../../../api/causal';
import { errorMessage } from '../../../api/errorMessage';
import type { StudyDetail } from '../../../api/types';
import { useStartCausalJob } from '../hooks/useCausalJobs';
import {
  ABLATION_DEFAULTS,
  ATTRIBUTION_DEFAULTS,
  DISSOCIATION_DEFAULTS,
  MAX_PROMPTS,
  RULES,
  TRACING_DEFAULTS,
  ablationProbe,
  attributionProbe,
  dissociationProbe,
  tracingProbe,
} from '../lib/probes';
import type { Built, Problem } from '../lib/probes';
import { TextField } from './Fields';
import { KeyGroupFields, PrefixSetFields } from './KeyGroupFields';

/**
 * The four probes as tabs (arrow keys, Home and End move between them), one form each.
 * Every form stays mounted while another is shown, so that switching loses nothing typed.
 */
export function ProbeTabs({
  study,
  onStarted,
}: {
  study: StudyDetail;
  onStarted: (job: CausalJob) => void;
}) {
  const { t } = useTranslation();
  const [active, setActive] = useState<CausalKind>('tracing');
  const tabs = useRef<Partial<Record<CausalKind, HTMLButtonElement | null>>>({});

  function onKeyDown(event: KeyboardEvent<HTMLButtonElement>) {
    const at = CAUSAL_KINDS.indexOf(active);
    const last = CAUSAL_KINDS.length - 1;
    const next =
      event.key === 'ArrowRight'
        ? (at + 1) % CAUSAL_KINDS.length
        : event.key === 'ArrowLeft'
          ? (at + last) % CAUSAL_KINDS.length
          : event.key === 'Home'
            ? 0
            : event.key === 'End'
              ? last
              : null;
    if (next === null) return;
    event.preventDefault();
    const kind = CAUSAL_KINDS[next]!;
    setActive(kind);
    tabs.current[kind]?.focus();
  }

  const panels: Record<CausalKind, ReactNode> = {
    tracing: <TracingForm studyId={study.id} onStarted={onStarted} />,
    attribution: <AttributionForm study={study} onStarted={onStarted} />,
    ablation: <AblationForm study={study} onStarted={onStarted} />,
    dissociation: <DissociationForm study={study} onStarted={onStarted} />,
  };

  return (
    <div className="causal-probes">
      <div role="tablist" aria-label={t('causal.form.tabs')} className="probe-tabs">
        {CAUSAL_KINDS.map((kind) => (
          <button
            key={kind}
            ref={(node) => {
              tabs.current[kind] = node;
            }}
            type="button"
            role="tab"
            id={`probe-tab-${kind}`}
            aria-selected={active === kind}
            aria-controls={`probe-panel-${kind}`}
            tabIndex={active === kind ? 0 : -1}
            onClick={() => setActive(kind)}
            onKeyDown={onKeyDown}
          >
            {t(`causal.kinds.${kind}`)}
          </button>
        ))}
      </div>
      {CAUSAL_KINDS.map((kind) => (
        <div
          key={kind}
          role="tabpanel"
          id={`probe-panel-${kind}`}
          aria-labelledby={`probe-tab-${kind}`}
          hidden={active !== kind}
          className="card"
        >
          {panels[kind]}
        </div>
      ))}
    </div>
  );
}

/**
 * A probe's form: its fields, its Run button, and what went wrong (a box's problem, or the
 * server's refusal) in an alert beside it. Nothing typed is lost on a refusal.
 */
function ProbeForm({
  kind,
  studyId,
  onStarted,
  build,
  onProblem,
  children,
}: {
  kind: CausalKind;
  studyId: number;
  onStarted: (job: CausalJob) => void;
  build: () => Built;
  /** The box the problem names (null: none), for its aria-invalid. */
  onProblem: (field: string | null) => void;
  children: ReactNode;
}) {
  const { t } = useTranslation();
  const start = useStartCausalJob(studyId, onStarted);
  const [problem, setProblem] = useState<Problem | null>(null);

  function run(event: FormEvent) {
    event.preventDefault();
    const built = build();
    if (!built.ok) {
      setProblem(built.problem);
      onProblem(built.problem.field);
      // Take the reader to the box the problem names.
      document.getElementById(built.problem.field)?.focus();
      return;
    }
    setProblem(null);
    onProblem(null);
    start.mutate(built.probe);
  }

  const message = problem
    ? t(`causal.problems.${problem.key}`, {
        field: t(`causal.fields.${problem.name}`),
        ...problem.values,
      })
    : start.isError
      ? errorMessage(start.error, t)
      : null;

  return (
    <form
      aria-label={t(`causal.kinds.${kind}`)}
      noValidate
      onSubmit={run}
      className="probe-form stack"
      data-testid={`probe-form-${kind}`}
    >
      <p className="muted">{t(`causal.form.about.${kind}`)}</p>
      {children}
      <div className="inline-fields">
        <button type="submit" className="primary" disabled={start.isPending}>
          {t(`causal.form.run.${kind}`)}
        </button>
      </div>
      {message && (
        <p role="alert" className="alert" data-testid={`probe-problem-${kind}`}>
          {message}
        </p>
      )}
    </form>
  );
}

function TracingForm({
  studyId,
  onStarted,
}: {
  studyId: number;
  onStarted: (job: CausalJob) => void;
}) {
  const { t } = useTranslation();
  const [state, setState] = useState(TRACING_DEFAULTS);
  const [invalid, setInvalid] = useState<string | null>(null);
  const field = (name: keyof typeof state) => ({
    id: `tracing-${name}`,
    value: state[name],
    onChange: (value: string) => setState((current) => ({ ...current, [name]: value })),
    invalid: invalid === `tracing-${name}`,
  });
  return (
    <ProbeForm
      kind="tracing"
      studyId={studyId}
      onStarted={onStarted}
      build={() => tracingProbe(state)}
      onProblem={setInvalid}
    >
      <TextField
        {...field('prompt')}
        label={t('causal.fields.prompt')}
        placeholder={t('causal.form.tracing.promptExample')}
        hint={t('causal.form.tracing.promptHint')}
      />
      <TextField
        {...field('subject')}
        label={t('causal.fields.subject')}
        placeholder={t('causal.form.tracing.subjectExample')}
        hint={t('causal.form.tracing.subjectHint')}
      />
      <TextField
        {...field('answer')}
        label={t('causal.fields.answer')}
        placeholder={t('causal.form.tracing.answerExample')}
        hint={t('causal.form.answerHint')}
      />
      <div className="inline-fields">
        <TextField {...field('noise')} label={t('causal.fields.noise')} number={RULES.noise} />
        <TextField
          {...field('samples')}
          label={t('causal.fields.samples')}
          number={RULES.samples}
        />
        <TextField {...field('window')} label={t('causal.fields.window')} number={RULES.window} />
        <TextField {...field('seed')} label={t('causal.fields.seed')} number={RULES.seed} />
      </div>
      <p className="muted">{t('causal.form.tracing.defaults')}</p>
    </ProbeForm>
  );
}

function AttributionForm({
  study,
  onStarted,
}: {
  study: StudyDetail;
  onStarted: (job: CausalJob) => void;
}) {
  const { t } = useTranslation();
  const [state, setState] = useState(ATTRIBUTION_DEFAULTS);
  const [invalid, setInvalid] = useState<string | null>(null);
  const field = (name: keyof typeof state) => ({
    id: `attribution-${name}`,
    value: state[name],
    onChange: (value: string) => setState((current) => ({ ...current, [name]: value })),
    invalid: invalid === `attribution-${name}`,
  });
  return (
    <ProbeForm
      kind="attribution"
      studyId={study.id}
      onStarted={onStarted}
      build={() => attributionProbe(state)}
      onProblem={setInvalid}
    >
      <TextField
        {...field('prompts')}
        label={t('causal.fields.prompts')}
        placeholder={t('causal.form.attribution.promptsExample')}
        hint={t('causal.form.attribution.promptsHint', { max: MAX_PROMPTS })}
        multiline
      />
      <TextField
        {...field('answer')}
        label={t('causal.fields.answer')}
        placeholder={t('causal.form.tracing.answerExample')}
        hint={t('causal.form.answerHint')}
      />
      <TextField
        {...field('layers')}
        label={t('causal.fields.layers')}
        placeholder="3, 5-7"
        hint={t('causal.form.layersHint', { layers: study.n_layers })}
      />
      <div className="inline-fields">
        <TextField {...field('steps')} label={t('causal.fields.steps')} number={RULES.steps} />
        <TextField
          {...field('threshold')}
          label={t('causal.fields.threshold')}
          number={RULES.threshold}
        />
        <TextField {...field('share')} label={t('causal.fields.share')} number={RULES.share} />
        <TextField {...field('seed')} label={t('causal.fields.seed')} number={RULES.seed} />
      </div>
      <p className="muted">{t('causal.form.attribution.defaults')}</p>
    </ProbeForm>
  );
}

function AblationForm({
  study,
  onStarted,
}: {
  study: StudyDetail;
  onStarted: (job: CausalJob) => void;
}) {
  const { t } = useTranslation();
  const [state, setState] = useState(ABLATION_DEFAULTS);
  const [invalid, setInvalid] = useState<string | null>(null);
  const field = (name: 'scale' | 'randomPrefixes' | 'seed', id: string) => ({
    id: `ablation-${id}`,
    value: state[name],
    onChange: (value: string) => setState((current) => ({ ...current, [name]: value })),
    invalid: invalid === `ablation-${id}`,
  });
  return (
    <ProbeForm
      kind="ablation"
      studyId={study.id}
      onStarted={onStarted}
      build={() => ablationProbe(state)}
      onProblem={setInvalid}
    >
      <KeyGroupFields
        id="ablation-group"
        legend={t('causal.form.group.legend')}
        value={state.group}
        onChange={(group) => setState((current) => ({ ...current, group }))}
        invalid={invalid}
        nLayers={study.n_layers}
        dFf={study.d_ff}
      />
      <div className="inline-fields">
        <TextField
          {...field('scale', 'scale')}
          label={t('causal.fields.scale')}
          number={RULES.scale}
          hint={t('causal.form.scaleHint')}
        />
        <TextField
          {...field('randomPrefixes', 'random')}
          label={t('causal.fields.random')}
          number={RULES.randomPrefixes}
        />
        <TextField {...field('seed', 'seed')} label={t('causal.fields.seed')} number={RULES.seed} />
      </div>
    </ProbeForm>
  );
}

function DissociationForm({
  study,
  onStarted,
}: {
  study: StudyDetail;
  onStarted: (job: CausalJob) => void;
}) {
  const { t } = useTranslation();
  const [state, setState] = useState(DISSOCIATION_DEFAULTS);
  const [invalid, setInvalid] = useState<string | null>(null);
  const field = (name: 'scale' | 'seed') => ({
    id: `dissociation-${name}`,
    value: state[name],
    onChange: (value: string) => setState((current) => ({ ...current, [name]: value })),
    invalid: invalid === `dissociation-${name}`,
  });
  return (
    <ProbeForm
      kind="dissociation"
      studyId={study.id}
      onStarted={onStarted}
      build={() => dissociationProbe(state)}
      onProblem={setInvalid}
    >
      <div className="probe-pair">
        {(['a', 'b'] as const).map((g) => (
          <KeyGroupFields
            key={g}
            id={`dissociation-${g}`}
            legend={t(`causal.dissociation.groups.${g}`)}
            value={g === 'a' ? state.groupA : state.groupB}
            onChange={(group) =>
              setState((current) => ({ ...current, [g === 'a' ? 'groupA' : 'groupB']: group }))
            }
            invalid={invalid}
            nLayers={study.n_layers}
            dFf={study.d_ff}
          />
        ))}
      </div>
      <div className="probe-pair">
        {(['p', 'q'] as const).map((s) => (
          <PrefixSetFields
            key={s}
            id={`dissociation-${s}`}
            legend={t(`causal.dissociation.sets.${s}`)}
            value={s === 'p' ? state.setP : state.setQ}
            onChange={(set) =>
              setState((current) => ({ ...current, [s === 'p' ? 'setP' : 'setQ']: set }))
            }
            invalid={invalid}
          />
        ))}
      </div>
      <div className="inline-fields">
        <TextField
          {...field('scale')}
          label={t('causal.fields.scale')}
          number={RULES.scale}
          hint={t('causal.form.scaleHint')}
        />
        <TextField {...field('seed')} label={t('causal.fields.seed')} number={RULES.seed} />
      </div>
    </ProbeForm>
  );
}
