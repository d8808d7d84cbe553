/* health.c: a hospital-system simulation over a tree of villages (in the style of BOTS health).
 *
 *   usage: suite_health_<variant> [levels=4] [steps=100] [cutoff=2]
 *
 * The villages form a complete 4-ary tree of `levels` levels; each has a hospital with some
 * staff and three patient lists (waiting, assess, inside). At each time step every village is
 * simulated by its own task, children first (a task per child village, then a taskwait): it takes
 * in the patients its children referred up, discharges the patients whose treatment is over,
 * assesses patients (treated here, or referred to the parent village with some probability),
 * admits waiting patients while staff is free, and generates new patients from its population.
 * A village's work per step is a few list operations: many tiny tasks, one per village per step.
 *
 * Deterministic: each village draws from its own random stream (seeded from its id), and a
 * parent reads its children's lists only after the taskwait. tasks = steps * (villages - 1)
 * without a cut-off (villages = (4^levels - 1) / 3): 8400 for levels = 4, steps = 100 (tests),
 * 1364000 for levels = 6, steps = 1000 (the benches). The result is a checksum of the treated
 * patients; the run checks that no patient was lost (generated = discharged + still in a list).
 */
#include "suite.h"

#define BRANCH 4

typedef struct patient {
  struct patient* next;
  uint64_t id;
  int time_left;  /* steps left in the current list (assess, inside) */
  int waited;     /* steps spent in waiting lists */
  int hops;       /* villages it was referred through */
} patient_t;

typedef struct {
  patient_t *head, *tail;
  long n;
} list_t;

typedef struct village {
  struct village* child[BRANCH];
  int nchild, level;
  uint64_t id, rng;
  int staff;                             /* free staff */
  list_t waiting, assess, inside, up;    /* up: referred to the parent, taken in next */
  long generated, discharged;            /* patients born here; patients discharged here */
  uint64_t checksum;
} village_t;

static const int kPopulation = 3, kStaff = 3, kAssessSteps = 2, kTreatSteps = 4;
static const double kSickP = 0.05, kReferP = 0.1;

static void push(list_t* l, patient_t* p) {
  p->next = NULL;
  if (l->tail) l->tail->next = p; else l->head = p;
  l->tail = p;
  l->n++;
}
static patient_t* pop(list_t* l) {
  patient_t* p = l->head;
  if (p) {
    l->head = p->next;
    if (!l->head) l->tail = NULL;
    l->n--;
  }
  return p;
}
static void append(list_t* to, list_t* from) {
  if (!from->head) return;
  if (to->tail) to->tail->next = from->head; else to->head = from->head;
  to->tail = from->tail;
  to->n += from->n;
  from->head = from->tail = NULL;
  from->n = 0;
}

static village_t* build(int level, int levels, uint64_t id) {
  village_t* v = calloc(1, sizeof *v);
  if (!v) { perror("calloc"); exit(2); }
  v->level = level;
  v->id = id;
  v->rng = suite_mix(id);
  v->staff = kStaff;
  if (level + 1 < levels)
    for (int i = 0; i < BRANCH; i++)
      v->child[v->nchild++] = build(level + 1, levels, id * BRANCH + 1 + i);
  return v;
}

/* One time step of village v alone (its children have done theirs). */
static void step_village(village_t* v) {
  for (int i = 0; i < v->nchild; i++) append(&v->waiting, &v->child[i]->up);
  /* Discharge the patients whose treatment is over. */
  list_t keep = {0};
  for (patient_t* p; (p = pop(&v->inside));) {
    if (--p->time_left > 0) { push(&keep, p); continue; }
    v->staff++;
    v->discharged++;
    v->checksum += suite_mix(p->id ^ ((uint64_t)p->waited << 32) ^ ((uint64_t)p->hops << 48));
    free(p);
  }
  v->inside = keep;
  /* Assessed patients are treated here, or referred up (not from the root village). */
  keep = (list_t){0};
  for (patient_t* p; (p = pop(&v->assess));) {
    if (--p->time_left > 0) { push(&keep, p); continue; }
    if (v->level > 0 && suite_rand(&v->rng) < kReferP) {
      v->staff++;
      p->hops++;
      push(&v->up, p);
    } else {
      p->time_left = kTreatSteps;
      push(&v->inside, p);
    }
  }
  v->assess = keep;
  /* Admit waiting patients while staff is free; the others wait one more step. */
  while (v->staff > 0 && v->waiting.head) {
    patient_t* p = pop(&v->waiting);
    v->staff--;
    p->time_left = kAssessSteps;
    push(&v->assess, p);
  }
  for (patient_t* p = v->waiting.head; p; p = p->next) p->waited++;
  /* New patients. */
  for (int i = 0; i < kPopulation; i++) {
    if (suite_rand(&v->rng) < kSickP) {
      patient_t* p = calloc(1, sizeof *p);
      if (!p) { perror("calloc"); exit(2); }
      p->id = v->id << 32 | (uint64_t)v->generated++;
      push(&v->waiting, p);
    }
  }
}

static void sim_serial(village_t* v) {
  for (int i = 0; i < v->nchild; i++) sim_serial(v->child[i]);
  step_village(v);
}

static void sim_village(village_t* v, int depth) {
  if (SUITE_SERIAL(depth)) {
    sim_serial(v);
    return;
  }
  for (int i = 0; i < v->nchild; i++) {
    village_t* c = v->child[i];
#pragma omp task firstprivate(c) SUITE_UNTIED SUITE_CUTOFF(depth)
    sim_village(c, depth + 1);
  }
#pragma omp taskwait
  step_village(v);
}

/* Tasks one step makes below a village at depth d. */
static unsigned long long step_tasks(const village_t* v, int d) {
  if (SUITE_SERIAL(d)) return 0;
  unsigned long long n = 0;
  for (int i = 0; i < v->nchild; i++) n += 1 + step_tasks(v->child[i], d + 1);
  return n;
}

/* Sums the counters of the tree and frees it. */
static void collect(village_t* v, long* generated, long* accounted, uint64_t* checksum) {
  for (int i = 0; i < v->nchild; i++) collect(v->child[i], generated, accounted, checksum);
  *generated += v->generated;
  *accounted += v->discharged + v->waiting.n + v->assess.n + v->inside.n + v->up.n;
  *checksum += v->checksum;
  list_t* lists[] = {&v->waiting, &v->assess, &v->inside, &v->up};
  for (int i = 0; i < 4; i++)
    for (patient_t* p; (p = pop(lists[i]));) free(p);
  free(v);
}

int main(int argc, char** argv) {
  const int levels = (int)suite_arg(argc, argv, 1, 4, 1, 10, "levels");
  const long steps = suite_arg(argc, argv, 2, 100, 0, 1000000, "steps");
  suite_cutoff_arg(argc, argv, 3, 2);
  village_t* root = build(0, levels, 0);
  const double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
  for (long s = 0; s < steps; s++) sim_village(root, 0);
  const double t1 = omp_get_wtime();

  const unsigned long long tasks = (unsigned long long)steps * step_tasks(root, 0);
  long generated = 0, accounted = 0;
  uint64_t checksum = 0;
  collect(root, &generated, &accounted, &checksum);
  char what[64], res[64];
  snprintf(what, sizeof what, "health levels=%d steps=%ld", levels, steps);
  snprintf(res, sizeof res, "%ld/%016llx", generated, (unsigned long long)checksum);
  suite_report(what, res, tasks, t1 - t0, generated == accounted);
  return 0;
}
