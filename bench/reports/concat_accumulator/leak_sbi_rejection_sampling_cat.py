# Source: https://github.com/sbi-dev/sbi/issues/198
# Report: RAM filled up during rejection sampling from a posterior with leakage; the maintainers traced it to a missing .detach() in the loop that keeps drawing candidates until enough samples fall inside the prior support.
# Shape: accepted candidates from the flow are grown into one tensor with torch.cat on every round of the rejection loop.
# Expect: TML008 line 17
import torch


def sample_with_leakage_correction(flow, prior, context, num_samples, batch=1000, max_rounds=10000):
    samples = torch.empty(0, prior.event_shape[0], device=context.device)
    num_accepted = 0
    rounds = 0
    while num_accepted < num_samples and rounds < max_rounds:
        candidates = flow.sample(batch, context=context).reshape(batch, -1)
        log_p = prior.log_prob(candidates)
        inside = torch.isfinite(log_p)
        accepted = candidates[inside]
        samples = torch.cat((samples, accepted), dim=0)  # expect: TML008
        num_accepted = samples.shape[0]
        rounds += 1
    acceptance_rate = num_accepted / max(rounds * batch, 1)
    return samples[:num_samples], acceptance_rate
