; ModuleID = 'input.cl'
source_filename = "input.cl"
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
target triple = "spir64-unknown-unknown"

@dexp.tile = internal unnamed_addr addrspace(3) global [64 x double] undef, align 8, !dbg !0

; Function Attrs: convergent minsize mustprogress nofree norecurse nounwind optsize willreturn
define dso_local spir_kernel void @saxpy(float addrspace(1)* nocapture noundef %y, float addrspace(1)* nocapture noundef readonly %x, float noundef %a) local_unnamed_addr #0 !dbg !33 !kernel_arg_addr_space !45 !kernel_arg_access_qual !46 !kernel_arg_type !47 !kernel_arg_base_type !47 !kernel_arg_type_qual !48 !kernel_arg_name !49 {
entry:
  %call = tail call spir_func i64 @_Z13get_global_idj(i32 noundef 0) #7, !dbg !50
  %arrayidx = getelementptr inbounds float, float addrspace(1)* %x, i64 %call, !dbg !51
  %0 = load float, float addrspace(1)* %arrayidx, align 4, !dbg !51, !tbaa !52
  %arrayidx1 = getelementptr inbounds float, float addrspace(1)* %y, i64 %call, !dbg !56
  %1 = load float, float addrspace(1)* %arrayidx1, align 4, !dbg !56, !tbaa !52
  %2 = tail call float @llvm.fmuladd.f32(float %a, float %0, float %1), !dbg !57
  store float %2, float addrspace(1)* %arrayidx1, align 4, !dbg !58, !tbaa !52
  ret void, !dbg !59
}

; Function Attrs: convergent minsize mustprogress nofree nounwind optsize readnone willreturn
declare spir_func i64 @_Z13get_global_idj(i32 noundef) local_unnamed_addr #1

; Function Attrs: mustprogress nofree nosync nounwind readnone speculatable willreturn
declare float @llvm.fmuladd.f32(float, float, float) #2

; Function Attrs: convergent minsize norecurse nounwind optsize
define dso_local spir_kernel void @dexp(double addrspace(1)* nocapture noundef writeonly %out, double addrspace(1)* nocapture noundef readonly %in) local_unnamed_addr #3 !dbg !2 !kernel_arg_addr_space !60 !kernel_arg_access_qual !61 !kernel_arg_type !62 !kernel_arg_base_type !62 !kernel_arg_type_qual !63 !kernel_arg_name !64 {
entry:
  %call = tail call spir_func i64 @_Z13get_global_idj(i32 noundef 0) #7, !dbg !65
  %call1 = tail call spir_func i64 @_Z12get_local_idj(i32 noundef 0) #7, !dbg !66
  %arrayidx = getelementptr inbounds double, double addrspace(1)* %in, i64 %call, !dbg !67
  %0 = load double, double addrspace(1)* %arrayidx, align 8, !dbg !67, !tbaa !68
  %arrayidx2 = getelementptr inbounds [64 x double], [64 x double] addrspace(3)* @dexp.tile, i64 0, i64 %call1, !dbg !70
  store double %0, double addrspace(3)* %arrayidx2, align 8, !dbg !71, !tbaa !68
  tail call spir_func void @_Z7barrierj(i32 noundef 1) #8, !dbg !72
  %sub = sub i64 63, %call1, !dbg !73
  %arrayidx3 = getelementptr inbounds [64 x double], [64 x double] addrspace(3)* @dexp.tile, i64 0, i64 %sub, !dbg !74
  %1 = load double, double addrspace(3)* %arrayidx3, align 8, !dbg !74, !tbaa !68
  %call4 = tail call spir_func double @_Z3expd(double noundef %1) #7, !dbg !75
  %add = fadd double %1, 2.000000e+00, !dbg !76
  %div = fdiv double %call4, %add, !dbg !77
  %arrayidx5 = getelementptr inbounds double, double addrspace(1)* %out, i64 %call, !dbg !78
  store double %div, double addrspace(1)* %arrayidx5, align 8, !dbg !79, !tbaa !68
  ret void, !dbg !80
}

; Function Attrs: convergent minsize mustprogress nofree nounwind optsize readnone willreturn
declare spir_func i64 @_Z12get_local_idj(i32 noundef) local_unnamed_addr #1

; Function Attrs: convergent minsize optsize
declare spir_func void @_Z7barrierj(i32 noundef) local_unnamed_addr #4

; Function Attrs: convergent minsize mustprogress nofree nounwind optsize readnone willreturn
declare spir_func double @_Z3expd(double noundef) local_unnamed_addr #1

; Function Attrs: convergent minsize nofree norecurse nounwind optsize writeonly
define dso_local spir_kernel void @hash(i32 addrspace(1)* nocapture noundef writeonly %h, i32 noundef %rounds) local_unnamed_addr #5 !dbg !81 !kernel_arg_addr_space !91 !kernel_arg_access_qual !61 !kernel_arg_type !92 !kernel_arg_base_type !92 !kernel_arg_type_qual !93 !kernel_arg_name !94 {
entry:
  %call = tail call spir_func i64 @_Z13get_global_idj(i32 noundef 0) #7, !dbg !95
  %conv = trunc i64 %call to i32, !dbg !96
  br label %for.cond, !dbg !97

for.cond:                                         ; preds = %for.body, %entry
  %v.0 = phi i32 [ %conv, %entry ], [ %add, %for.body ], !dbg !98
  %r.0 = phi i32 [ 0, %entry ], [ %inc, %for.body ], !dbg !99
  %cmp = icmp ult i32 %r.0, %rounds, !dbg !100
  br i1 %cmp, label %for.body, label %for.cond.cleanup, !dbg !102

for.cond.cleanup:                                 ; preds = %for.cond
  %arrayidx = getelementptr inbounds i32, i32 addrspace(1)* %h, i64 %call, !dbg !103
  store i32 %v.0, i32 addrspace(1)* %arrayidx, align 4, !dbg !104, !tbaa !105
  ret void, !dbg !107

for.body:                                         ; preds = %for.cond
  %shr = lshr i32 %v.0, 16, !dbg !108
  %xor = xor i32 %shr, %v.0, !dbg !109
  %mul = mul i32 %xor, 73244475, !dbg !110
  %add = add i32 %mul, %r.0, !dbg !111
  %inc = add nuw i32 %r.0, 1, !dbg !112
  br label %for.cond, !dbg !113, !llvm.loop !114
}

; Function Attrs: nofree nosync nounwind readnone speculatable willreturn
declare void @llvm.dbg.value(metadata, metadata, metadata) #6

attributes #0 = { convergent minsize mustprogress nofree norecurse nounwind optsize willreturn "frame-pointer"="none" "min-legal-vector-width"="0" "no-builtins" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "uniform-work-group-size"="true" }
attributes #1 = { convergent minsize mustprogress nofree nounwind optsize readnone willreturn "frame-pointer"="none" "no-builtins" "no-trapping-math"="true" "stack-protector-buffer-size"="8" }
attributes #2 = { mustprogress nofree nosync nounwind readnone speculatable willreturn }
attributes #3 = { convergent minsize norecurse nounwind optsize "frame-pointer"="none" "min-legal-vector-width"="0" "no-builtins" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "uniform-work-group-size"="true" }
attributes #4 = { convergent minsize optsize "frame-pointer"="none" "no-builtins" "no-trapping-math"="true" "stack-protector-buffer-size"="8" }
attributes #5 = { convergent minsize nofree norecurse nounwind optsize writeonly "frame-pointer"="none" "min-legal-vector-width"="0" "no-builtins" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "uniform-work-group-size"="true" }
attributes #6 = { nofree nosync nounwind readnone speculatable willreturn }
attributes #7 = { convergent minsize nobuiltin nounwind optsize readnone willreturn "no-builtins" }
attributes #8 = { convergent minsize nobuiltin nounwind optsize "no-builtins" }

!llvm.dbg.cu = !{!10}
!llvm.module.flags = !{!28, !29}
!opencl.ocl.version = !{!30}
!opencl.spir.version = !{!30}
!llvm.ident = !{!31}
!oclgrind_binary_type = !{!32}

!0 = !DIGlobalVariableExpression(var: !1, expr: !DIExpression(DW_OP_constu, 3, DW_OP_swap, DW_OP_xderef))
!1 = distinct !DIGlobalVariable(name: "tile", scope: !2, file: !3, line: 11, type: !25, isLocal: true, isDefinition: true)
!2 = distinct !DISubprogram(name: "dexp", scope: !3, file: !3, line: 9, type: !4, scopeLine: 10, flags: DIFlagPrototyped, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !10, retainedNodes: !17)
!3 = !DIFile(filename: "input.cl", directory: "/work/main/tests/data/profiles")
!4 = !DISubroutineType(cc: DW_CC_LLVM_OpenCLKernel, types: !5)
!5 = !{null, !6, !8}
!6 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !7, size: 64, dwarfAddressSpace: 1)
!7 = !DIBasicType(name: "double", size: 64, encoding: DW_ATE_float)
!8 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !9, size: 64, dwarfAddressSpace: 1)
!9 = !DIDerivedType(tag: DW_TAG_const_type, baseType: !7)
!10 = distinct !DICompileUnit(language: DW_LANG_OpenCL, file: !11, producer: "Debian clang version 14.0.6", isOptimized: true, runtimeVersion: 0, emissionKind: FullDebug, retainedTypes: !12, globals: !16, splitDebugInlining: false, nameTableKind: None)
!11 = !DIFile(filename: "<stdin>", directory: "/work/main/tests/data/profiles")
!12 = !{!13}
!13 = !DIDerivedType(tag: DW_TAG_typedef, name: "uint", file: !14, line: 98, baseType: !15)
!14 = !DIFile(filename: "/lib/x86_64-linux-gnu/oclgrind/21.10/opencl-c-base.h", directory: "")
!15 = !DIBasicType(name: "unsigned int", size: 32, encoding: DW_ATE_unsigned)
!16 = !{!0}
!17 = !{!18, !19, !20, !23, !24}
!18 = !DILocalVariable(name: "out", arg: 1, scope: !2, file: !3, line: 9, type: !6)
!19 = !DILocalVariable(name: "in", arg: 2, scope: !2, file: !3, line: 9, type: !8)
!20 = !DILocalVariable(name: "i", scope: !2, file: !3, line: 12, type: !21)
!21 = !DIDerivedType(tag: DW_TAG_typedef, name: "size_t", file: !14, line: 111, baseType: !22)
!22 = !DIBasicType(name: "unsigned long", size: 64, encoding: DW_ATE_unsigned)
!23 = !DILocalVariable(name: "l", scope: !2, file: !3, line: 12, type: !21)
!24 = !DILocalVariable(name: "v", scope: !2, file: !3, line: 15, type: !7)
!25 = !DICompositeType(tag: DW_TAG_array_type, baseType: !7, size: 4096, elements: !26)
!26 = !{!27}
!27 = !DISubrange(count: 64)
!28 = !{i32 2, !"Debug Info Version", i32 3}
!29 = !{i32 1, !"wchar_size", i32 4}
!30 = !{i32 1, i32 2}
!31 = !{!"Debian clang version 14.0.6"}
!32 = !{i4 4}
!33 = distinct !DISubprogram(name: "saxpy", scope: !3, file: !3, line: 2, type: !34, scopeLine: 3, flags: DIFlagPrototyped, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !10, retainedNodes: !40)
!34 = !DISubroutineType(cc: DW_CC_LLVM_OpenCLKernel, types: !35)
!35 = !{null, !36, !38, !37}
!36 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !37, size: 64, dwarfAddressSpace: 1)
!37 = !DIBasicType(name: "float", size: 32, encoding: DW_ATE_float)
!38 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !39, size: 64, dwarfAddressSpace: 1)
!39 = !DIDerivedType(tag: DW_TAG_const_type, baseType: !37)
!40 = !{!41, !42, !43, !44}
!41 = !DILocalVariable(name: "y", arg: 1, scope: !33, file: !3, line: 2, type: !36)
!42 = !DILocalVariable(name: "x", arg: 2, scope: !33, file: !3, line: 2, type: !38)
!43 = !DILocalVariable(name: "a", arg: 3, scope: !33, file: !3, line: 2, type: !37)
!44 = !DILocalVariable(name: "i", scope: !33, file: !3, line: 4, type: !21)
!45 = !{i32 1, i32 1, i32 0}
!46 = !{!"none", !"none", !"none"}
!47 = !{!"float*", !"float*", !"float"}
!48 = !{!"", !"const", !""}
!49 = !{!"y", !"x", !"a"}
!50 = !DILocation(line: 4, column: 16, scope: !33)
!51 = !DILocation(line: 5, column: 16, scope: !33)
!52 = !{!53, !53, i64 0}
!53 = !{!"float", !54, i64 0}
!54 = !{!"omnipotent char", !55, i64 0}
!55 = !{!"Simple C/C++ TBAA"}
!56 = !DILocation(line: 5, column: 23, scope: !33)
!57 = !DILocation(line: 5, column: 21, scope: !33)
!58 = !DILocation(line: 5, column: 10, scope: !33)
!59 = !DILocation(line: 6, column: 1, scope: !33)
!60 = !{i32 1, i32 1}
!61 = !{!"none", !"none"}
!62 = !{!"double*", !"double*"}
!63 = !{!"", !"const"}
!64 = !{!"out", !"in"}
!65 = !DILocation(line: 12, column: 16, scope: !2)
!66 = !DILocation(line: 12, column: 38, scope: !2)
!67 = !DILocation(line: 13, column: 15, scope: !2)
!68 = !{!69, !69, i64 0}
!69 = !{!"double", !54, i64 0}
!70 = !DILocation(line: 13, column: 5, scope: !2)
!71 = !DILocation(line: 13, column: 13, scope: !2)
!72 = !DILocation(line: 14, column: 5, scope: !2)
!73 = !DILocation(line: 15, column: 24, scope: !2)
!74 = !DILocation(line: 15, column: 16, scope: !2)
!75 = !DILocation(line: 16, column: 14, scope: !2)
!76 = !DILocation(line: 16, column: 26, scope: !2)
!77 = !DILocation(line: 16, column: 21, scope: !2)
!78 = !DILocation(line: 16, column: 5, scope: !2)
!79 = !DILocation(line: 16, column: 12, scope: !2)
!80 = !DILocation(line: 17, column: 1, scope: !2)
!81 = distinct !DISubprogram(name: "hash", scope: !3, file: !3, line: 19, type: !82, scopeLine: 20, flags: DIFlagPrototyped, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !10, retainedNodes: !85)
!82 = !DISubroutineType(cc: DW_CC_LLVM_OpenCLKernel, types: !83)
!83 = !{null, !84, !13}
!84 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !13, size: 64, dwarfAddressSpace: 1)
!85 = !{!86, !87, !88, !89}
!86 = !DILocalVariable(name: "h", arg: 1, scope: !81, file: !3, line: 19, type: !84)
!87 = !DILocalVariable(name: "rounds", arg: 2, scope: !81, file: !3, line: 19, type: !13)
!88 = !DILocalVariable(name: "v", scope: !81, file: !3, line: 21, type: !13)
!89 = !DILocalVariable(name: "r", scope: !90, file: !3, line: 22, type: !13)
!90 = distinct !DILexicalBlock(scope: !81, file: !3, line: 22, column: 5)
!91 = !{i32 1, i32 0}
!92 = !{!"uint*", !"uint"}
!93 = !{!"", !""}
!94 = !{!"h", !"rounds"}
!95 = !DILocation(line: 21, column: 20, scope: !81)
!96 = !DILocation(line: 21, column: 14, scope: !81)
!97 = !DILocation(line: 22, column: 10, scope: !90)
!98 = !DILocation(line: 0, scope: !81)
!99 = !DILocation(line: 0, scope: !90)
!100 = !DILocation(line: 22, column: 24, scope: !101)
!101 = distinct !DILexicalBlock(scope: !90, file: !3, line: 22, column: 5)
!102 = !DILocation(line: 22, column: 5, scope: !90)
!103 = !DILocation(line: 24, column: 5, scope: !81)
!104 = !DILocation(line: 24, column: 25, scope: !81)
!105 = !{!106, !106, i64 0}
!106 = !{!"int", !54, i64 0}
!107 = !DILocation(line: 25, column: 1, scope: !81)
!108 = !DILocation(line: 23, column: 21, scope: !101)
!109 = !DILocation(line: 23, column: 16, scope: !101)
!110 = !DILocation(line: 23, column: 29, scope: !101)
!111 = !DILocation(line: 23, column: 42, scope: !101)
!112 = !DILocation(line: 22, column: 35, scope: !101)
!113 = !DILocation(line: 22, column: 5, scope: !101)
!114 = distinct !{!114, !102, !115}
!115 = !DILocation(line: 23, column: 44, scope: !90)
