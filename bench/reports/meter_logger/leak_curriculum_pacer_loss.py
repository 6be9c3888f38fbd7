# Source: https://github.com/arthurdls/Edge-of-Stability-on-Diffusion/blob/71bc7bacd9ed2624ad8ffc2074352c7a8808b574/implementations/progressive_difficulty_curriculum.py
# Report: diffusion curriculum trainer feeds every step's loss to a CurriculumPacer that smooths it to decide when to widen the timestep range; the repo passes loss.item(), this leak passes the tensor (one edit away)
# Shape: pacer.update(loss, step) -> self.running_loss = s * self.running_loss + (1 - s) * batch_loss on a pacer that lives for the whole run: an EMA of graph-attached losses kept on self, chaining every step's graph (best_loss pins one more)
# Expect: TML005 line 80
import torch
from tqdm import tqdm


class CurriculumPacer:
    """Widen the sampled timestep range once the smoothed loss stops improving."""

    def __init__(self, total_timesteps=1000, num_clusters=20, max_patience=200, smoothing=0.99, min_delta=1e-4):
        self.total_timesteps = total_timesteps
        self.num_clusters = num_clusters
        self.max_patience = max_patience
        self.smoothing = smoothing
        self.min_delta = min_delta
        self.current_stage = 1
        self.patience_counter = 0
        self.best_loss = float("inf")
        self.running_loss = None
        self.cluster_size = total_timesteps // num_clusters

    def get_min_timestep(self):
        if self.current_stage >= self.num_clusters:
            return 0
        return max(0, int(self.total_timesteps - self.current_stage * self.cluster_size))

    def update(self, batch_loss, global_step):
        if self.running_loss is None:
            self.running_loss = batch_loss
        else:
            self.running_loss = self.smoothing * self.running_loss + (1 - self.smoothing) * batch_loss
        current_loss = self.running_loss

        if current_loss < (self.best_loss - self.min_delta):
            self.best_loss = current_loss
            self.patience_counter = 0
        else:
            self.patience_counter += 1

        if self.patience_counter > self.max_patience and self.current_stage < self.num_clusters:
            self.current_stage += 1
            print(f"[Curriculum] step {global_step}: stage {self.current_stage}/{self.num_clusters}")
            self.patience_counter = 0
            self.best_loss = float("inf")
            self.running_loss = None


def p_losses(model, schedule, x0, t):
    noise = torch.randn_like(x0)
    x_t = schedule.q_sample(x0, t, noise)
    return torch.nn.functional.mse_loss(model(x_t, t), noise)


def progressive_train(model, schedule, train_loader, device, epochs=100, lr=2e-4):
    model = model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cuda")
    pacer = CurriculumPacer(total_timesteps=schedule.timesteps, num_clusters=20, max_patience=2)

    global_step = 0
    for epoch in range(epochs):
        model.train()
        running_loss = 0.0
        pbar = tqdm(train_loader, desc=f"Epoch {epoch + 1}/{epochs}")
        for x, _ in pbar:
            x = x.to(device)
            min_t = pacer.get_min_timestep()
            t = torch.randint(min_t, schedule.timesteps, (x.shape[0],), device=device).long()

            opt.zero_grad()
            with torch.amp.autocast("cuda"):
                loss = p_losses(model, schedule, x, t)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()

            # curriculum update with the current loss
            pacer.update(loss, global_step)  # expect: TML005

            running_loss += loss.item()
            global_step += 1
            if global_step % 100 == 0:
                pbar.set_postfix({"loss": f"{loss.item():.4f}"})

        print(f"End epoch {epoch + 1}, avg loss {running_loss / len(train_loader):.4f}")
        torch.save({"model_state": model.state_dict(), "curriculum_stage": pacer.current_stage}, "latest.pt")
