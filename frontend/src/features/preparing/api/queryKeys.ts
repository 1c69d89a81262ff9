/** The studies still being mined for the signed-in annotator. */
export const preparingKeys = {
  runs: () => ['preparing'] as const,
};
