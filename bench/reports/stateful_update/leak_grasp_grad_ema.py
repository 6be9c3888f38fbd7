# Source: https://github.com/tengyu-liu/diverse-and-stable-grasp/blob/e00d5e1c15d0950217cdb950e0d107aada791b41/utils/PhysicsGuide.py
# Report: audited idiom: PhysicsGuide keeps an EMA (utils/EMA.py, self.average = mu * x + (1 - mu) * self.average) that normalises the Langevin step; in optimize() it is updated inside torch.no_grad()
# Shape: this rewrite feeds the EMA a graph-attached energy term (penetration from the penetration model) outside no_grad, so self.average chains every step's graph to the previous one
# Expect: TML005 line 53
import torch


class EMA:
    def __init__(self, mu):
        self.mu = mu
        self.average = torch.tensor(1.0).float().cuda()

    def apply(self, x):
        _x = x.abs().mean(0)
        self.average = self.mu * _x + (1 - self.mu) * self.average


class PhysicsGuide:
    def __init__(self, hand_model, object_model, penetration_model, args):
        self.hand_model = hand_model
        self.object_model = object_model
        self.penetration_model = penetration_model
        self.args = args
        self.pen_ema = EMA(0.98)

    def compute_energy(self, object_code, z, contact_point_indices):
        hand_verts = self.hand_model(z)
        idx = contact_point_indices.unsqueeze(-1).expand(-1, -1, 3)
        contact_point = torch.gather(hand_verts, 1, idx)
        surface_distance = self.object_model(object_code, contact_point).abs().sum(1)
        penetration = self.penetration_model(object_code, z) * 10
        hand_prior = self.hand_model.prior(z) * self.args.hprior_weight
        return surface_distance, penetration, hand_prior

    def refine(self, energy, grad, object_code, z, contact_point_indices):
        step_size = 0.1
        temperature = 1e-3
        noise = torch.randn_like(z) * self.args.noise_size * step_size
        scale = self.pen_ema.average.clamp(min=1e-6)
        new_z = z - 0.5 * grad / scale * step_size * step_size + noise
        new_z.requires_grad_(True)
        surface_distance, penetration, hand_prior = self.compute_energy(
            object_code, new_z, contact_point_indices
        )
        new_energy = surface_distance + penetration.sum(1) + hand_prior
        new_grad = torch.autograd.grad(new_energy.sum(), new_z)[0]
        with torch.no_grad():
            alpha = torch.rand(self.args.batch_size, device=z.device)
            accept = alpha < torch.exp((energy - new_energy) / temperature)
            z[accept] = new_z[accept]
            energy[accept] = new_energy[accept]
            grad[accept] = new_grad[accept]
        self.pen_ema.apply(penetration)  # expect: TML005
        return energy, grad, z


def run_refinement(physics_guide, energy, grad, object_code, z, contact_point_indices, args):
    for step in range(args.refine_steps):
        energy, grad, z = physics_guide.refine(energy, grad, object_code, z, contact_point_indices)
        if step % 100 == 0:
            print(f"step {step}: energy {energy.mean().item():.4f}")
    return z
