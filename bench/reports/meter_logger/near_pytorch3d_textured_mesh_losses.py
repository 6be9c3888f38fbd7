# Source: https://github.com/facebookresearch/pytorch3d/blob/650cc09d225cbc1a69eb14cd44596779f0aba45b/docs/tutorials/fit_textured_mesh.ipynb
# Report: the PyTorch3D mesh-fitting tutorial keeps a losses registry {name: {"weight", "values": []}} for plotting and logs each term with losses[k]["values"].append(float(l.detach().cpu())) while the weighted sum is rebuilt every iteration for backward
# Shape: the tutorial idiom: the registry only receives float(l.detach().cpu()); the per-iteration loss dict and the sum_loss accumulator (rebuilt every iteration and backpropagated) stay as in the tutorial
# Expect: near-miss: must be silent
import numpy as np
import torch
from tqdm import tqdm
import matplotlib.pyplot as plt
from pytorch3d.loss import mesh_edge_loss, mesh_laplacian_smoothing, mesh_normal_consistency
from pytorch3d.renderer import TexturesVertex

device = torch.device("cuda:0")

losses = {
    "rgb": {"weight": 1.0, "values": []},
    "silhouette": {"weight": 1.0, "values": []},
    "edge": {"weight": 1.0, "values": []},
    "normal": {"weight": 0.01, "values": []},
    "laplacian": {"weight": 1.0, "values": []},
}


def update_mesh_shape_prior_losses(mesh, loss):
    loss["edge"] = mesh_edge_loss(mesh)
    loss["normal"] = mesh_normal_consistency(mesh)
    loss["laplacian"] = mesh_laplacian_smoothing(mesh, method="uniform")


def plot_losses(losses):
    fig = plt.figure(figsize=(13, 5))
    ax = fig.gca()
    for k, l in losses.items():
        ax.plot(l["values"], label=k + " loss")
    ax.legend(fontsize="16")
    ax.set_title("Loss vs iterations", fontsize="16")


def fit_textured_mesh(src_mesh, renderer_textured, target_cameras, target_rgb,
                      target_silhouette, lights, num_views, Niter=2000, num_views_per_iteration=2):
    verts_shape = src_mesh.verts_packed().shape
    deform_verts = torch.full(verts_shape, 0.0, device=device, requires_grad=True)
    sphere_verts_rgb = torch.full([1, verts_shape[0], 3], 0.5, device=device, requires_grad=True)
    optimizer = torch.optim.SGD([deform_verts, sphere_verts_rgb], lr=1.0, momentum=0.9)

    loop = tqdm(range(Niter))
    for i in loop:
        optimizer.zero_grad()
        new_src_mesh = src_mesh.offset_verts(deform_verts)
        new_src_mesh.textures = TexturesVertex(verts_features=sphere_verts_rgb)

        loss = {k: torch.tensor(0.0, device=device) for k in losses}
        update_mesh_shape_prior_losses(new_src_mesh, loss)

        for j in np.random.permutation(num_views).tolist()[:num_views_per_iteration]:
            images_predicted = renderer_textured(new_src_mesh, cameras=target_cameras[j], lights=lights)
            predicted_silhouette = images_predicted[..., 3]
            loss_silhouette = ((predicted_silhouette - target_silhouette[j]) ** 2).mean()
            loss["silhouette"] += loss_silhouette / num_views_per_iteration
            predicted_rgb = images_predicted[..., :3]
            loss_rgb = ((predicted_rgb - target_rgb[j]) ** 2).mean()
            loss["rgb"] += loss_rgb / num_views_per_iteration

        sum_loss = torch.tensor(0.0, device=device)
        for k, l in loss.items():
            sum_loss += l * losses[k]["weight"]
            losses[k]["values"].append(float(l.detach().cpu()))

        loop.set_description("total_loss = %.6f" % sum_loss)
        sum_loss.backward()
        optimizer.step()

    plot_losses(losses)
    return src_mesh.offset_verts(deform_verts.detach())
