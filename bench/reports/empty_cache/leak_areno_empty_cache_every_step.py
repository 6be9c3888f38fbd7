# Source: https://github.com/inclusionAI/AReno/pull/515
# Report: "fix(engine): empty CUDA cache after every train step": the ten-step cadence was dropped and torch.cuda.empty_cache() now runs after every completed optimizer/global step, inside the stepped path of the gradient-accumulation loop
# Shape: the cache release sits in the per-batch loop of the engine's train(), behind the `stepped` flag returned by a helper
# Expect: TML009 line 53
import torch


class TrainEngine:
    def __init__(self, model, optimizer, lr_scheduler, grad_accum_steps=4, max_grad_norm=1.0):
        self.model = model
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.grad_accum_steps = grad_accum_steps
        self.max_grad_norm = max_grad_norm
        self.micro_step = 0
        self.global_step = 0

    def forward_backward(self, batch):
        out = self.model(**batch)
        loss = out.loss / self.grad_accum_steps
        loss.backward()
        return loss.detach()

    def maybe_step(self):
        self.micro_step += 1
        if self.micro_step % self.grad_accum_steps != 0:
            return False
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
        self.optimizer.step()
        self.lr_scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.global_step += 1
        return True


def train(engine, dataloader, num_epochs, device, logger=None, log_every=10):
    engine.model.train()
    for epoch in range(num_epochs):
        running = 0.0
        for batch in dataloader:
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            loss = engine.forward_backward(batch)
            running += loss.item()
            stepped = engine.maybe_step()
            if not stepped:
                # gradient-accumulation microbatch: nothing else to do
                continue
            if logger is not None and engine.global_step % log_every == 0:
                logger.log({"loss": running / log_every, "step": engine.global_step})
                running = 0.0
            # release cached blocks after every completed global step
            if torch.cuda.is_available():
                torch.cuda.empty_cache()  # expect: TML009
    return engine.global_step
