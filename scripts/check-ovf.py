#!/usr/bin/env python3
"""Structural check of the Northwind appliance's OVA (OVF 1.0), without the DMTF schemas.

usage: scripts/check-ovf.py northwind-appliance.ova

The DMTF XSDs (dsp8023, CIM rasd/vssd) cannot be fetched offline, so this checks what the OVF 1.0
envelope schema requires and what VMware and VirtualBox rely on:
  - the tar: USTAR, the .ovf first, then the .mf, then the files the descriptor references, nothing else;
  - the manifest: one "SHA256(name)= hex" line per other member, each digest right;
  - Envelope (ovf:version 1.0) > References/File (ovf:id, ovf:href, ovf:size = the member's size);
  - DiskSection/Disk (ovf:diskId, ovf:fileRef resolving to a File, ovf:capacity = the VMDK's virtual
    size, ovf:format streamOptimized; the VMDK's own header says streamOptimized and the same capacity);
  - NetworkSection/Network (ovf:name), every Section has its Info first;
  - VirtualSystem (ovf:id) with Info, OperatingSystemSection (ovf:id) and VirtualHardwareSection with
    System (vssd:ElementName, InstanceID, VirtualSystemType) and Items for CPU (3), memory (4), a disk
    controller (5, 6 or 20), a disk (17) and a NIC (10); each Item has rasd:ElementName,
    rasd:InstanceID (unique) and rasd:ResourceType, rasd: children in the CIM schema's (alphabetical)
    order; a disk's HostResource names a Disk, its Parent a controller Item; a NIC's Connection names a
    Network;
  - UEFI for both hypervisors: vmw:Config firmware=efi, and vbox:Machine with Firmware type EFI whose
    disk Image uuid is the Disk's vbox:uuid.
Exits 1 with every problem listed, 0 with a summary.
"""
import hashlib
import re
import struct
import sys
import tarfile
import xml.etree.ElementTree as ET

OVF = "http://schemas.dmtf.org/ovf/envelope/1"
RASD = "http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_ResourceAllocationSettingData"
VSSD = "http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_VirtualSystemSettingData"
VMW = "http://www.vmware.com/schema/ovf"
VBOX = "http://www.virtualbox.org/ovf/machine"
STREAM = "http://www.vmware.com/interfaces/specifications/vmdk.html#streamOptimized"
# CIM_ResourceAllocationSettingData elements, in the schema's sequence order (OVF 1.0 / CIM 2.22).
RASD_ORDER = ["Address", "AddressOnParent", "AllocationUnits", "AutomaticAllocation",
              "AutomaticDeallocation", "Caption", "Connection", "ConsumerVisibility", "Description",
              "ElementName", "HostResource", "InstanceID", "Limit", "MappingBehavior",
              "OtherResourceType", "Parent", "PoolID", "Reservation", "ResourceSubType",
              "ResourceType", "VirtualQuantity", "Weight"]
VSSD_ORDER = ["AutomaticStartupActionDelay", "AutomaticStartupActionSequenceNumber", "Caption",
              "Description", "ElementName", "InstanceID", "VirtualSystemIdentifier",
              "VirtualSystemType"]

problems = []


def q(ns, name):
    return "{%s}%s" % (ns, name)


def need(cond, msg):
    if not cond:
        problems.append(msg)
    return cond


def attr(el, name, ns=OVF):
    return el.get(q(ns, name))


def vmdk_header(data):
    """(capacity in bytes, createType) from a sparse VMDK's header and embedded descriptor."""
    if data[:4] != b"KDMV":
        return None, None
    capacity_sectors = struct.unpack_from("<Q", data, 12)[0]
    desc_offset, desc_size = struct.unpack_from("<QQ", data, 28)
    desc = data[desc_offset * 512:(desc_offset + desc_size) * 512].split(b"\0")[0].decode("ascii", "replace")
    m = re.search(r'createType="([^"]+)"', desc)
    return capacity_sectors * 512, (m.group(1) if m else None)


def check_section_info(section, name):
    children = list(section)
    need(children and children[0].tag == q(OVF, "Info"), "%s: the first child must be Info" % name)


def main(path):
    with tarfile.open(path, "r:") as tar:
        members = tar.getmembers()
        names = [m.name for m in members]
        need(all(m.isfile() for m in members), "tar: only regular files allowed")
        need(names and names[0].endswith(".ovf"), "tar: the .ovf descriptor must come first (got %s)" % names[:1])
        need(len(names) > 1 and names[1].endswith(".mf"), "tar: the .mf manifest must come second")
        need(tar.format == tarfile.USTAR_FORMAT or all(len(n) < 100 for n in names), "tar: not USTAR")
        data = {m.name: tar.extractfile(m).read() for m in members}
        sizes = {m.name: m.size for m in members}

    ovf_name = names[0]
    root = ET.fromstring(data[ovf_name])
    need(root.tag == q(OVF, "Envelope"), "root element must be ovf:Envelope, got %s" % root.tag)
    need(attr(root, "version") == "1.0", "Envelope ovf:version must be 1.0")

    # Manifest
    mf_name = next((n for n in names if n.endswith(".mf")), None)
    if need(mf_name is not None, "no manifest"):
        lines = data[mf_name].decode().splitlines()
        listed = {}
        for line in lines:
            m = re.fullmatch(r"SHA256\(([^)]+)\)= ([0-9a-f]{64})", line)
            if need(m is not None, "manifest line not 'SHA256(name)= hex': %r" % line):
                listed[m.group(1)] = m.group(2)
        for n in names:
            if n == mf_name:
                continue
            if need(n in listed, "manifest does not list %s" % n):
                need(hashlib.sha256(data[n]).hexdigest() == listed[n], "manifest digest wrong for %s" % n)
        need(set(listed) <= set(names), "manifest lists files not in the OVA: %s" % (set(listed) - set(names)))

    # References
    refs = root.find(q(OVF, "References"))
    files = {}
    if need(refs is not None, "no References"):
        for f in refs.findall(q(OVF, "File")):
            fid, href, size = attr(f, "id"), attr(f, "href"), attr(f, "size")
            need(fid and href, "File needs ovf:id and ovf:href")
            need(fid not in files, "duplicate File id %s" % fid)
            files[fid] = href
            if need(href in data, "File %s: %s is not in the OVA" % (fid, href)) and size is not None:
                need(int(size) == sizes[href], "File %s: ovf:size %s but the member has %d bytes" % (fid, size, sizes[href]))
            need(size is not None, "File %s: no ovf:size" % fid)
        extra = set(names) - set(files.values()) - {ovf_name, mf_name}
        need(not extra, "OVA members nobody references: %s" % extra)
        order = [n for n in names if n not in (ovf_name, mf_name)]
        need(order == [files[k] for k in files if files[k] in order], "tar: files must follow References' order")

    # DiskSection
    disks = {}
    ds = root.find(q(OVF, "DiskSection"))
    if need(ds is not None, "no DiskSection"):
        check_section_info(ds, "DiskSection")
        for d in ds.findall(q(OVF, "Disk")):
            did, ref, cap, fmt = attr(d, "diskId"), attr(d, "fileRef"), attr(d, "capacity"), attr(d, "format")
            need(did and cap and fmt, "Disk needs ovf:diskId, ovf:capacity and ovf:format")
            disks[did] = d
            need(fmt == STREAM, "Disk %s: ovf:format must be streamOptimized VMDK" % did)
            units = attr(d, "capacityAllocationUnits")
            need(units in (None, "byte"), "Disk %s: capacity units %s not checked" % (did, units))
            if need(ref in files, "Disk %s: fileRef %s resolves to no File" % (did, ref)):
                vcap, ctype = vmdk_header(data[files[ref]])
                need(ctype == "streamOptimized", "Disk %s: the VMDK's createType is %s" % (did, ctype))
                need(vcap == int(cap), "Disk %s: ovf:capacity %s but the VMDK holds %s bytes" % (did, cap, vcap))
        need(disks, "DiskSection has no Disk")

    # NetworkSection
    networks = set()
    ns_ = root.find(q(OVF, "NetworkSection"))
    if need(ns_ is not None, "no NetworkSection"):
        check_section_info(ns_, "NetworkSection")
        for n in ns_.findall(q(OVF, "Network")):
            if need(attr(n, "name"), "Network needs ovf:name"):
                networks.add(attr(n, "name"))

    # VirtualSystem
    vs = root.find(q(OVF, "VirtualSystem"))
    summary = {}
    if need(vs is not None, "no VirtualSystem"):
        need(attr(vs, "id"), "VirtualSystem needs ovf:id")
        check_section_info(vs, "VirtualSystem")
        oss = vs.find(q(OVF, "OperatingSystemSection"))
        if need(oss is not None, "no OperatingSystemSection"):
            check_section_info(oss, "OperatingSystemSection")
            need((attr(oss, "id") or "").isdigit(), "OperatingSystemSection needs a numeric ovf:id")
            summary["os"] = "%s / %s" % (attr(oss, "id"), oss.get(q(VMW, "osType")))
        vhs = vs.find(q(OVF, "VirtualHardwareSection"))
        if need(vhs is not None, "no VirtualHardwareSection"):
            check_section_info(vhs, "VirtualHardwareSection")
            system = vhs.find(q(OVF, "System"))
            if need(system is not None, "no System in VirtualHardwareSection"):
                tags = [c.tag.split("}")[1] for c in system]
                need(tags == sorted(tags, key=VSSD_ORDER.index), "System: vssd: elements out of schema order: %s" % tags)
                for t in ("ElementName", "InstanceID", "VirtualSystemType"):
                    need(system.find(q(VSSD, t)) is not None, "System needs vssd:%s" % t)
            items = {}
            by_type = {}
            for it in vhs.findall(q(OVF, "Item")):
                rasd = [c for c in it if c.tag.startswith("{%s}" % RASD)]
                tags = [c.tag.split("}")[1] for c in rasd]
                unknown = [t for t in tags if t not in RASD_ORDER]
                need(not unknown, "Item: unknown rasd: elements %s" % unknown)
                known = [t for t in tags if t in RASD_ORDER]
                need(known == sorted(known, key=RASD_ORDER.index), "Item: rasd: elements out of schema order: %s" % tags)
                need(all(c.tag.startswith("{%s}" % RASD) for c in list(it)[:len(rasd)]), "Item: rasd: elements must come before extensions")
                get = lambda t: (it.findtext(q(RASD, t)) or "").strip()
                for t in ("ElementName", "InstanceID", "ResourceType"):
                    need(get(t), "Item needs rasd:%s" % t)
                iid = get("InstanceID")
                need(iid not in items, "duplicate InstanceID %s" % iid)
                items[iid] = it
                by_type.setdefault(get("ResourceType"), []).append(it)
            for rtype, what in (("3", "CPU"), ("4", "memory"), ("17", "disk"), ("10", "NIC")):
                need(rtype in by_type, "no %s Item (ResourceType %s)" % (what, rtype))
            controllers = [i for t in ("5", "6", "20") for i in by_type.get(t, [])]
            need(controllers, "no disk controller Item (ResourceType 5, 6 or 20)")
            controller_ids = {(c.findtext(q(RASD, "InstanceID")) or "").strip() for c in controllers}
            for d in by_type.get("17", []):
                host = (d.findtext(q(RASD, "HostResource")) or "").strip()
                m = re.fullmatch(r"(?:ovf:)?/disk/(.+)", host)
                need(m and m.group(1) in disks, "disk Item: HostResource %r names no Disk" % host)
                need((d.findtext(q(RASD, "Parent")) or "").strip() in controller_ids, "disk Item: Parent is not a controller Item")
            for n in by_type.get("10", []):
                conn = (n.findtext(q(RASD, "Connection")) or "").strip()
                need(conn in networks, "NIC Item: Connection %r names no Network" % conn)
            for c in by_type.get("3", []):
                summary["cpus"] = c.findtext(q(RASD, "VirtualQuantity"))
            for m in by_type.get("4", []):
                summary["memory"] = "%s %s" % (m.findtext(q(RASD, "VirtualQuantity")), m.findtext(q(RASD, "AllocationUnits")))
            summary["controller"] = ",".join((c.findtext(q(RASD, "ResourceSubType")) or "?") for c in controllers)
            efi = [c for c in vhs.findall(q(VMW, "Config")) if c.get(q(VMW, "key")) == "firmware"]
            need(efi and efi[0].get(q(VMW, "value")) == "efi", "no vmw:Config firmware=efi (VMware would boot BIOS)")
        vbox = vs.find(q(VBOX, "Machine"))
        if need(vbox is not None, "no vbox:Machine (VirtualBox would boot BIOS)"):
            need(attr(vbox, "required") == "false", "vbox:Machine must be ovf:required=false")
            fw = vbox.find("./%s/%s" % (q(OVF, "Hardware"), q(OVF, "Firmware")))
            need(fw is not None and fw.get("type") == "EFI", "vbox:Machine: no Firmware type=EFI")
            image_uuids = {i.get("uuid", "").strip("{}") for i in vbox.iter(q(OVF, "Image"))}
            disk_uuids = {d.get(q(VBOX, "uuid")) for d in disks.values()}
            need(disk_uuids and disk_uuids <= image_uuids, "vbox:Machine: the Disk's vbox:uuid %s is attached nowhere (%s)" % (disk_uuids, image_uuids))

    if problems:
        for p in problems:
            print("check-ovf: FAIL:", p)
        return 1
    print("check-ovf: OK: %s: members %s; %d disk(s), networks %s, %s" % (path, names, len(disks), sorted(networks), summary))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
